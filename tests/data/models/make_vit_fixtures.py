#!/usr/bin/python3
"""Tiny ViT checkpoints with random weights, a test image each, and the reference outputs of their
preprocessing and forward pass, for tests/test_vit.cpp.

The reference is an independent PyTorch implementation of the Hugging Face ViT
(ViTForImageClassification; Dosovitskiy et al. 2021) written from the model's definition, not
Attention Lab's code:
  patch embedding: Conv2d(C, hidden, kernel p, stride p) (weight hidden x C x p x p, bias);
  tokens x_0 = [cls_token; the patches in row-major order] + position_embeddings (L = 1 + N);
  each layer: a = LN_before(x); Q = a Wq^T + bq, K = a Wk^T + bk, V = a Wv^T + bv (nn.Linear:
  W is out x in; head h the columns [h d, (h + 1) d)); P_h = softmax(Q_h K_h^T / sqrt(d)), no
  mask; h = x + [P_1 V_1 .. P_H V_H] Wo^T + bo; x = h + W2 GELU(W1 LN_after(h) + b1) + b2 with
  GELU the exact erf form, u/2 (1 + erf(u / sqrt 2)) (hidden_act "gelu");
  then x = LN(x) (vit.layernorm); logits = classifier(x[0]) (the [CLS] token).
LN(u) = (u - mean u) / sqrt(var u + eps) * g + b, eps = layer_norm_eps (HF's default 1e-12).
Computed in float64 from the weights exactly as stored (the F16 checkpoint's reference uses its
F16-rounded weights), so the C++ float32 pass is compared with the exact result of the same
weights.

Preprocessing (ViTImageProcessor): resize to size (height, width) with resample 2 (bilinear),
then x * rescale_factor, then (x - image_mean[c]) / image_std[c]. Hugging Face resizes with PIL,
whose bilinear filter antialiases when it shrinks (a triangle filter whose support grows with
the scale factor, weights renormalised at the borders) and rounds the 8-bit result after each of
its two passes (horizontal, then vertical). Attention Lab's resize is that filter computed in
float with no rounding; here it is torch.nn.functional.interpolate(mode="bilinear",
antialias=True, align_corners=False) on the float image. check_resize() checks the claim: on
random 8-bit images shrunk, enlarged and both at once, interpolate agrees with PIL's own float
resize (mode "F", which uses PIL's coefficients in float32) to within 2e-5 of a 0-255 value, and
with PIL's 8-bit resize to within one step (0.94 at most in these cases: the two roundings), so
pixels differ from Hugging Face's by at most 1/255 before normalisation.
Channels: a colour image for a 1-channel model becomes its luma 0.299 R + 0.587 G + 0.114 B (in
float; PIL's "L" conversion rounds it to 8 bits), and a grayscale image for a 3-channel model is
repeated in the three channels.

Writes two folders beside this script:
  tiny-vit-rgb-f32/  ViTForImageClassification's save: tensor names with the "vit." prefix plus
                     classifier.*, F32, 3 channels, image 16 x 16, patches 4 x 4 (L = 17),
                     id2label of 5 classes, preprocessor size {"height": 16, "width": 16},
                     ImageNet's mean and std; image.png is RGB, 37 wide and 23 high (shrunk to 16 x 16);
  tiny-vit-gray-f16/ ViTModel's save: names without prefix, the pooler (pooler.dense.*), no
                     classifier (so no logits), F16, 1 channel, qkv_bias false, image 12 x 12,
                     patches 4 x 4 (L = 10), no layer_norm_eps in config.json (the default
                     1e-12), the old preprocessor form "size": 12 with a one-number mean and std;
                     image.png is grayscale, 9 wide and 20 high (enlarged in width, shrunk in
                     height).
Each holds config.json, preprocessor_config.json, model.safetensors, image.png and reference/:
pixels.npy (C x H x W, the preprocessed image), q_layer{l}.npy, k_layer{l}.npy, v_layer{l}.npy
(H x L x d, after the bias, before the 1/sqrt(d) scale), attention_layer{l}.npy (H x L x L),
logits.npy (num_labels; tiny-vit-rgb-f32 only), and pixels_other_image.npy: the other fixture's
image preprocessed for this model (the grayscale image repeated into 3 channels; the colour image
turned into luma), all float64.

Run with /usr/bin/python3 (python3-torch, python3-numpy, python3-pil); the safetensors files are
written by hand, by training/safetensors_files.py (8-byte little-endian header length, the JSON
header padded with spaces to a multiple of 8, the raw little-endian data).
"""

import json
import math
import os

import numpy as np
import torch
from PIL import Image

from make_fixtures import RandomWeights, write_safetensors  # beside this script

HERE = os.path.dirname(os.path.abspath(__file__))
SEED = 20240917
HF_DEFAULT_EPS = 1e-12


# ---- preprocessing ------------------------------------------------------------------------------

def resize(image, height, width):
    """C x h x w float64 -> C x height x width: PIL's bilinear filter in float (see above)."""
    return torch.nn.functional.interpolate(image[None], size=(height, width), mode="bilinear",
                                           antialias=True, align_corners=False)[0]


def check_resize():
    rng = np.random.default_rng(7)
    for h, w, out_h, out_w in [(23, 37, 16, 16), (9, 13, 16, 16), (30, 20, 12, 28),
                               (9, 20, 12, 12), (100, 61, 7, 9)]:
        image = rng.integers(0, 256, size=(h, w)).astype(np.uint8)
        ours = resize(torch.from_numpy(image.astype(np.float64))[None], out_h, out_w)[0].numpy()
        pil_float = np.asarray(Image.fromarray(image.astype(np.float32), mode="F").resize(
            (out_w, out_h), Image.BILINEAR), dtype=np.float64)
        pil_bytes = np.asarray(Image.fromarray(image).resize((out_w, out_h), Image.BILINEAR),
                               dtype=np.float64)
        assert np.abs(ours - pil_float).max() < 2e-5, (h, w, np.abs(ours - pil_float).max())
        assert np.abs(ours - pil_bytes).max() < 1, (h, w, np.abs(ours - pil_bytes).max())


def image_values(path, channels):
    """The PNG's 8-bit values as C x h x w float64, converted to the model's channel count."""
    image = Image.open(path)
    values = np.asarray(image, dtype=np.float64)
    if values.ndim == 2:
        values = values[None]
    else:
        values = values[:, :, :3].transpose(2, 0, 1)
    if values.shape[0] == 3 and channels == 1:
        values = (0.299 * values[0] + 0.587 * values[1] + 0.114 * values[2])[None]
    elif values.shape[0] == 1 and channels == 3:
        values = np.repeat(values, 3, axis=0)
    return torch.from_numpy(np.ascontiguousarray(values))


def preprocess(path, processor, channels):
    """ViTImageProcessor's resize, rescale and normalise, as defined above."""
    size = processor["size"]
    height, width = (size, size) if isinstance(size, int) else (size["height"], size["width"])
    x = resize(image_values(path, channels), height, width) * processor["rescale_factor"]
    mean = torch.tensor(processor["image_mean"], dtype=torch.float64).reshape(-1, 1, 1)
    std = torch.tensor(processor["image_std"], dtype=torch.float64).reshape(-1, 1, 1)
    return (x - mean) / std


# ---- weights ------------------------------------------------------------------------------------

def random_weights(spec, generator):
    """ViT's tensors (names without prefix) in nn.Linear's out x in layout, float64. The scales
    make the attention neither uniform nor one-hot and the GELU work in its curved part."""
    hidden, inner, c, p = spec["hidden"], spec["inner"], spec["channels"], spec["patch"]
    tokens = (spec["image"] // p) ** 2 + 1
    w = RandomWeights(generator)
    w["embeddings.cls_token"] = w.normal(1, 1, hidden, std=0.5)
    w["embeddings.position_embeddings"] = w.normal(1, tokens, hidden, std=0.4)
    w.linear("embeddings.patch_embeddings.projection", (hidden, c, p, p),
             0.6 / math.sqrt(c * p * p), hidden)
    for layer in range(spec["layers"]):
        e = f"encoder.layer.{layer}."
        w.norm(e + "layernorm_before", hidden)
        for name in ("query", "key", "value"):
            w.linear(e + f"attention.attention.{name}", (hidden, hidden), 0.45,
                     hidden if spec["qkv_bias"] else None)
        w.linear(e + "attention.output.dense", (hidden, hidden), 0.25, hidden)
        w.norm(e + "layernorm_after", hidden)
        w.linear(e + "intermediate.dense", (inner, hidden), 0.3, inner)
        w.linear(e + "output.dense", (hidden, inner), 0.15, hidden)
    w.norm("layernorm", hidden)
    return dict(w)


# ---- the reference forward pass -----------------------------------------------------------------

def layer_norm(x, gain, bias, eps):
    mean = x.mean(dim=-1, keepdim=True)
    variance = ((x - mean) ** 2).mean(dim=-1, keepdim=True)
    return (x - mean) / torch.sqrt(variance + eps) * gain + bias


def gelu_erf(u):
    return 0.5 * u * (1 + torch.erf(u / math.sqrt(2)))


def patch_embedding(pixels, weight, bias):
    """Conv2d with kernel = stride = p, as a product: each p x p patch (row-major over the grid)
    flattened in (channel, row, column) order, times the weight flattened the same way."""
    c, height, width = pixels.shape
    p = weight.shape[-1]
    patches = pixels.reshape(c, height // p, p, width // p, p).permute(1, 3, 0, 2, 4)
    return patches.reshape(-1, c * p * p) @ weight.reshape(weight.shape[0], -1).T + bias


def check_building_blocks(generator):
    """The hand-written LayerNorm, GELU and patch embedding agree with PyTorch's own."""
    u = torch.randn(5, 12, generator=generator, dtype=torch.float64) * 3
    gain, bias = torch.rand(12, dtype=torch.float64), torch.rand(12, dtype=torch.float64)
    torch.testing.assert_close(layer_norm(u, gain, bias, 1e-12), torch.nn.functional.layer_norm(
        u, (12,), gain, bias, eps=1e-12))
    torch.testing.assert_close(gelu_erf(u), torch.nn.functional.gelu(u))
    pixels = torch.randn(3, 8, 12, generator=generator, dtype=torch.float64)
    weight = torch.randn(6, 3, 4, 4, generator=generator, dtype=torch.float64)
    conv = torch.nn.functional.conv2d(pixels[None], weight, bias[:6], stride=4)[0]  # 6 x 2 x 3
    torch.testing.assert_close(patch_embedding(pixels, weight, bias[:6]), conv.flatten(1).T)


def forward(w, spec, pixels):
    """Q, K, V (H x L x d), P (H x L x L) per layer, and the logits (or None), float64."""
    hidden, heads, eps = spec["hidden"], spec["heads"], spec["eps"]
    d = hidden // heads
    patches = patch_embedding(pixels, w["embeddings.patch_embeddings.projection.weight"],
                              w["embeddings.patch_embeddings.projection.bias"])
    x = torch.cat([w["embeddings.cls_token"][0], patches]) + \
        w["embeddings.position_embeddings"][0]
    length = x.shape[0]
    zero = torch.zeros(hidden, dtype=torch.float64)
    captured = []
    for layer in range(spec["layers"]):
        e = f"encoder.layer.{layer}."
        a = layer_norm(x, w[e + "layernorm_before.weight"], w[e + "layernorm_before.bias"], eps)
        q, k, v = (a @ w[e + f"attention.attention.{name}.weight"].T +
                   w.get(e + f"attention.attention.{name}.bias", zero)
                   for name in ("query", "key", "value"))
        q, k, v = (t.reshape(length, heads, d).transpose(0, 1) for t in (q, k, v))
        p = torch.softmax(q @ k.transpose(1, 2) / math.sqrt(d), dim=-1)
        o = (p @ v).transpose(0, 1).reshape(length, hidden)
        h = x + o @ w[e + "attention.output.dense.weight"].T + w[e + "attention.output.dense.bias"]
        a = layer_norm(h, w[e + "layernorm_after.weight"], w[e + "layernorm_after.bias"], eps)
        inner = gelu_erf(a @ w[e + "intermediate.dense.weight"].T + w[e + "intermediate.dense.bias"])
        x = h + inner @ w[e + "output.dense.weight"].T + w[e + "output.dense.bias"]
        captured.append((q, k, v, p))
    x = layer_norm(x, w["layernorm.weight"], w["layernorm.bias"], eps)
    logits = None
    if "classifier.weight" in w:
        logits = x[0] @ w["classifier.weight"].T + w["classifier.bias"]
    return captured, logits


# ---- files --------------------------------------------------------------------------------------

def test_image(rng, height, width, colour):
    """Smooth shapes (a bright disc on a diagonal ramp) with noise, so attention has structure."""
    y, x = np.mgrid[0:height, 0:width].astype(np.float64)
    ramp = 60 + 120 * (x / width + y / height) / 2
    disc = 90 * (((x - 0.65 * width) ** 2 + (y - 0.4 * height) ** 2) < (0.3 * height) ** 2)
    base = ramp + disc
    if colour:
        channels = [base, 255 - base * 0.8, 40 + 0.5 * base + 80 * (x > width / 2)]
        values = np.stack(channels, axis=-1) + rng.normal(0, 12, size=(height, width, 3))
        return Image.fromarray(np.clip(np.round(values), 0, 255).astype(np.uint8), mode="RGB")
    values = base + rng.normal(0, 12, size=(height, width))
    return Image.fromarray(np.clip(np.round(values), 0, 255).astype(np.uint8), mode="L")


def write_folder(spec, weights, processor, image, generator):
    folder = os.path.join(HERE, spec["name"])
    reference = os.path.join(folder, "reference")
    os.makedirs(reference, exist_ok=True)
    config = {"model_type": "vit", "architectures": [spec["architecture"]],
              "hidden_size": spec["hidden"], "num_hidden_layers": spec["layers"],
              "num_attention_heads": spec["heads"], "intermediate_size": spec["inner"],
              "hidden_act": "gelu", "hidden_dropout_prob": 0.0,
              "attention_probs_dropout_prob": 0.0, "initializer_range": 0.02,
              "image_size": spec["image"], "patch_size": spec["patch"],
              "num_channels": spec["channels"], "qkv_bias": spec["qkv_bias"],
              "encoder_stride": spec["patch"]}
    if "eps" in spec["config_keys"]:
        config["layer_norm_eps"] = spec["eps"]
    if spec["labels"]:
        config["id2label"] = {str(i): name for i, name in enumerate(spec["labels"])}
        config["label2id"] = {name: i for i, name in enumerate(spec["labels"])}
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
        f.write("\n")
    with open(os.path.join(folder, "preprocessor_config.json"), "w") as f:
        json.dump(processor, f, indent=2)
        f.write("\n")
    image.save(os.path.join(folder, "image.png"))

    hidden = spec["hidden"]
    if spec["labels"]:
        normal = lambda *shape, std: torch.randn(*shape, generator=generator,
                                                 dtype=torch.float64) * std
        weights["classifier.weight"] = normal(len(spec["labels"]), hidden, std=0.5)
        weights["classifier.bias"] = normal(len(spec["labels"]), std=0.1)
    numpy_dtype = {"F32": "<f4", "F16": "<f2"}[spec["dtype"]]
    stored = {key: value.numpy().astype(numpy_dtype) for key, value in weights.items()}
    tensors = []
    for key, array in stored.items():
        name = key if key.startswith("classifier.") else spec["prefix"] + key
        tensors.append((name, spec["dtype"], array))
    if spec["pooler"]:  # ViTModel's pooler, which Attention Lab ignores
        tensors.append((spec["prefix"] + "pooler.dense.weight", spec["dtype"],
                        np.ones((hidden, hidden), dtype=numpy_dtype)))
        tensors.append((spec["prefix"] + "pooler.dense.bias", spec["dtype"],
                        np.zeros(hidden, dtype=numpy_dtype)))
    write_safetensors(os.path.join(folder, "model.safetensors"), tensors, "make_vit_fixtures.py")

    # The reference runs on the weights as stored (rounded to F16 for the F16 checkpoint).
    exact = {key: torch.from_numpy(array.astype(np.float64)) for key, array in stored.items()}
    pixels = preprocess(os.path.join(folder, "image.png"), processor, spec["channels"])
    assert pixels.shape == (spec["channels"], spec["image"], spec["image"])
    captured, logits = forward(exact, spec, pixels)
    np.save(os.path.join(reference, "pixels.npy"), pixels.contiguous().numpy())
    for layer, (q, k, v, p) in enumerate(captured):
        for symbol, tensor in (("q", q), ("k", k), ("v", v), ("attention", p)):
            np.save(os.path.join(reference, f"{symbol}_layer{layer}.npy"),
                    tensor.contiguous().numpy())
    if logits is not None:
        np.save(os.path.join(reference, "logits.npy"), logits.numpy())


def main():
    check_resize()
    check_building_blocks(torch.Generator().manual_seed(1))
    generator = torch.Generator().manual_seed(SEED)
    rng = np.random.default_rng(SEED)

    rgb = {"name": "tiny-vit-rgb-f32", "architecture": "ViTForImageClassification",
           "hidden": 16, "layers": 2, "heads": 2, "inner": 32, "image": 16, "patch": 4,
           "channels": 3, "qkv_bias": True, "eps": HF_DEFAULT_EPS, "config_keys": ["eps"],
           "labels": ["ankle", "boot", "coat", "dress", "shirt"], "dtype": "F32",
           "prefix": "vit.", "pooler": False}
    rgb_processor = {"do_normalize": True, "do_rescale": True, "do_resize": True,
                     "image_mean": [0.485, 0.456, 0.406],
                     "image_processor_type": "ViTImageProcessor",
                     "image_std": [0.229, 0.224, 0.225], "resample": 2,
                     "rescale_factor": 0.00392156862745098,
                     "size": {"height": 16, "width": 16}}
    write_folder(rgb, random_weights(rgb, generator), rgb_processor,
                 test_image(rng, 23, 37, colour=True), generator)

    gray = {"name": "tiny-vit-gray-f16", "architecture": "ViTModel",
            "hidden": 12, "layers": 2, "heads": 3, "inner": 24, "image": 12, "patch": 4,
            "channels": 1, "qkv_bias": False, "eps": HF_DEFAULT_EPS, "config_keys": [],
            "labels": [], "dtype": "F16", "prefix": "", "pooler": True}
    gray_processor = {"do_normalize": True, "do_resize": True, "feature_extractor_type":
                      "ViTFeatureExtractor", "image_mean": [0.45], "image_std": [0.3],
                      "resample": 2, "size": 12, "do_rescale": True,
                      "rescale_factor": 0.00392156862745098}
    write_folder(gray, random_weights(gray, generator), gray_processor,
                 test_image(rng, 20, 9, colour=False), generator)

    # Each model on the other fixture's image: the channel conversions.
    for spec, processor, other in ((rgb, rgb_processor, gray), (gray, gray_processor, rgb)):
        pixels = preprocess(os.path.join(HERE, other["name"], "image.png"), processor,
                            spec["channels"])
        np.save(os.path.join(HERE, spec["name"], "reference", "pixels_other_image.npy"),
                pixels.contiguous().numpy())


if __name__ == "__main__":
    main()
