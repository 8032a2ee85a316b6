#!/usr/bin/python3
"""Trains Attention Lab's built-in image model: a small ViT on Fashion-MNIST.

Data: Fashion-MNIST (Xiao, Rasul and Vollgraf 2017; Zalando SE, MIT licence) as Debian's
dataset-fashion-mnist package ships it (/usr/share/datasets/fashion-mnist: 60,000 training and
10,000 test images, 28 x 28 grayscale, ten classes). The last 5,000 training images are held out
for the validation loss; the model trains on the other 55,000 and is evaluated once, at the end,
on the 10,000 test images.

Preprocessing, as preprocessor_config.json states it (ViTImageProcessor): the 28 x 28 images
need no resize; x = (v / 255 - mean) / std for an 8-bit value v, with mean and std the training
images' statistics rounded to four decimals (IMAGE_MEAN, IMAGE_STD). Augmentation of the
training batches only, on the 8-bit images before that: a horizontal flip with probability 1/2.
(A first run that also shifted the images by up to 2 pixels underfitted in this budget: training
loss above the validation loss throughout, 84.4% on the test set.)

Model: the Hugging Face ViT (ViTForImageClassification): a 4 x 4 patch embedding (7 x 7 = 49
patches) plus [CLS] and learned position embeddings (50 tokens), 4 pre-LayerNorm blocks of 4
heads of d = 32 (hidden 128), an MLP of 256 with the exact (erf) GELU, a final LayerNorm and a
linear classifier on the [CLS] token; LayerNorm eps 1e-12 (Hugging Face's default); no dropout.
AdamW (betas 0.9, 0.999, weight decay 0.05 on matrices), a linear warm-up of WARMUP steps to the
peak learning rate PEAK_LR then a cosine decay to zero; batches of BATCH images drawn in a
shuffled order, epoch after epoch; gradient norm clipped at 1; seed SEED; a fixed number of
steps (--steps).

Writes into --out: config.json, preprocessor_config.json, model.safetensors (F32, the
ViTForImageClassification names: vit.* and classifier.*; nn.Linear weights out x in, the patch
embedding hidden x 1 x 4 x 4) and samples/NN-class.png (the first test image of each class);
and beside this script: loss.csv (step, training loss of the batch, validation loss and
accuracy every EVAL_EVERY steps), test_predictions.csv (index, label, predicted over the 10,000
test images) and samples.csv (the sample files, their test index, label and prediction). Prints
the test accuracy.

Run with Debian's python3 (python3-torch, python3-numpy, python3-pil, libopenblas0-pthread,
dataset-fashion-mnist):
  /usr/bin/python3 training/fashion_vit/train.py --out resources/models/fashion-vit --steps 4000
"""

import argparse
import gzip
import json
import math
import os
import struct
import sys
import time

import numpy as np
import torch
from PIL import Image

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from safetensors_files import write_safetensors  # noqa: E402 (training/)

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = "/usr/share/datasets/fashion-mnist"
CLASSES = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker",
           "Bag", "Ankle boot"]
SEED = 2024
IMAGE, PATCH, CHANNELS = 28, 4, 1
HIDDEN, LAYERS, HEADS, INNER = 128, 4, 4, 256
LAYER_NORM_EPS = 1e-12
BATCH, PEAK_LR, WARMUP, WEIGHT_DECAY = 128, 1e-3, 300, 0.05
VALIDATION = 5000
EVAL_EVERY = 200
# The training images' mean and standard deviation of v / 255, rounded (computed by
# dataset_statistics(), which main() checks).
IMAGE_MEAN, IMAGE_STD = 0.2860, 0.3530


def read_idx(name):
    with gzip.open(os.path.join(DATA, name), "rb") as f:
        data = f.read()
    magic, count = struct.unpack(">II", data[:8])
    if magic == 2051:  # images: count x rows x cols bytes
        rows, cols = struct.unpack(">II", data[8:16])
        return np.frombuffer(data, dtype=np.uint8, offset=16).reshape(count, rows, cols)
    return np.frombuffer(data, dtype=np.uint8, offset=8)  # labels


def load():
    train_images = read_idx("train-images-idx3-ubyte.gz")
    train_labels = read_idx("train-labels-idx1-ubyte.gz")
    test_images = read_idx("t10k-images-idx3-ubyte.gz")
    test_labels = read_idx("t10k-labels-idx1-ubyte.gz")
    return train_images, train_labels, test_images, test_labels


def dataset_statistics(images):
    values = images.astype(np.float64) / 255
    return values.mean(), values.std()


def normalise(images):
    """8-bit images (N x 28 x 28, uint8 tensor) -> N x 1 x 28 x 28, as the processor states."""
    return ((images.float() / 255 - IMAGE_MEAN) / IMAGE_STD)[:, None]


def augment(images, generator):
    """A random horizontal flip of each image (uint8 tensors)."""
    flip = torch.rand(images.shape[0], generator=generator) < 0.5
    return torch.where(flip[:, None, None], images.flip(-1), images)


class Vit(torch.nn.Module):
    """The Hugging Face ViT, its tensors under ViTForImageClassification's names."""

    def __init__(self):
        super().__init__()
        p = torch.nn.Parameter
        std = 0.02
        tokens = (IMAGE // PATCH) ** 2 + 1
        w = {"vit.embeddings.cls_token": p(torch.randn(1, 1, HIDDEN) * std),
             "vit.embeddings.position_embeddings": p(torch.randn(1, tokens, HIDDEN) * std),
             "vit.embeddings.patch_embeddings.projection.weight":
                 p(torch.randn(HIDDEN, CHANNELS, PATCH, PATCH) * std),
             "vit.embeddings.patch_embeddings.projection.bias": p(torch.zeros(HIDDEN))}
        for i in range(LAYERS):
            e = f"vit.encoder.layer.{i}."
            for ln in ("layernorm_before", "layernorm_after"):
                w[e + ln + ".weight"] = p(torch.ones(HIDDEN))
                w[e + ln + ".bias"] = p(torch.zeros(HIDDEN))
            for name, (rows, cols) in {"attention.attention.query": (HIDDEN, HIDDEN),
                                       "attention.attention.key": (HIDDEN, HIDDEN),
                                       "attention.attention.value": (HIDDEN, HIDDEN),
                                       "attention.output.dense": (HIDDEN, HIDDEN),
                                       "intermediate.dense": (INNER, HIDDEN),
                                       "output.dense": (HIDDEN, INNER)}.items():
                w[e + name + ".weight"] = p(torch.randn(rows, cols) * std)
                w[e + name + ".bias"] = p(torch.zeros(rows))
        w["vit.layernorm.weight"] = p(torch.ones(HIDDEN))
        w["vit.layernorm.bias"] = p(torch.zeros(HIDDEN))
        w["classifier.weight"] = p(torch.randn(len(CLASSES), HIDDEN) * std)
        w["classifier.bias"] = p(torch.zeros(len(CLASSES)))
        # ParameterDict keys may not hold dots
        self.params = torch.nn.ParameterDict({k.replace(".", "/"): v for k, v in w.items()})

    def weights(self):
        return {k.replace("/", "."): v for k, v in self.params.items()}

    def forward(self, pixels, attention_of=None):
        """pixels: N x 1 x 28 x 28 -> logits N x 10. With attention_of (a list), each layer's
        attention (N x heads x 50 x 50) is appended to it."""
        w = self.weights()
        linear = torch.nn.functional.linear
        count = pixels.shape[0]
        d = HIDDEN // HEADS
        patches = torch.nn.functional.conv2d(
            pixels, w["vit.embeddings.patch_embeddings.projection.weight"],
            w["vit.embeddings.patch_embeddings.projection.bias"], stride=PATCH)
        patches = patches.flatten(2).transpose(1, 2)  # N x 49 x hidden, row-major over the grid
        cls = w["vit.embeddings.cls_token"].expand(count, -1, -1)
        x = torch.cat([cls, patches], dim=1) + w["vit.embeddings.position_embeddings"]
        length = x.shape[1]

        def norm(u, name):
            return torch.nn.functional.layer_norm(u, (HIDDEN,), w[name + ".weight"],
                                                  w[name + ".bias"], LAYER_NORM_EPS)

        for i in range(LAYERS):
            e = f"vit.encoder.layer.{i}."
            a = norm(x, e + "layernorm_before")
            q, k, v = (linear(a, w[e + f"attention.attention.{n}.weight"],
                              w[e + f"attention.attention.{n}.bias"])
                       .reshape(count, length, HEADS, d).transpose(1, 2)
                       for n in ("query", "key", "value"))
            attention = torch.softmax((q @ k.transpose(-1, -2)) / math.sqrt(d), dim=-1)
            if attention_of is not None:
                attention_of.append(attention.detach())
            o = (attention @ v).transpose(1, 2).reshape(count, length, HIDDEN)
            x = x + linear(o, w[e + "attention.output.dense.weight"],
                           w[e + "attention.output.dense.bias"])
            a = norm(x, e + "layernorm_after")
            hidden = torch.nn.functional.gelu(linear(a, w[e + "intermediate.dense.weight"],
                                                     w[e + "intermediate.dense.bias"]))
            x = x + linear(hidden, w[e + "output.dense.weight"], w[e + "output.dense.bias"])
        x = norm(x, "vit.layernorm")
        return linear(x[:, 0], w["classifier.weight"], w["classifier.bias"])


def save(model, folder):
    """model.safetensors (F32), config.json and preprocessor_config.json."""
    write_safetensors(os.path.join(folder, "model.safetensors"),
                      [(name, "F32", value.detach().numpy().astype("<f4"))
                       for name, value in model.weights().items()],
                      "training/fashion_vit/train.py")
    config = {"model_type": "vit", "architectures": ["ViTForImageClassification"],
              "hidden_size": HIDDEN, "num_hidden_layers": LAYERS, "num_attention_heads": HEADS,
              "intermediate_size": INNER, "hidden_act": "gelu", "hidden_dropout_prob": 0.0,
              "attention_probs_dropout_prob": 0.0, "initializer_range": 0.02,
              "layer_norm_eps": LAYER_NORM_EPS, "image_size": IMAGE, "patch_size": PATCH,
              "num_channels": CHANNELS, "qkv_bias": True, "encoder_stride": PATCH,
              "id2label": {str(i): name for i, name in enumerate(CLASSES)},
              "label2id": {name: i for i, name in enumerate(CLASSES)},
              "torch_dtype": "float32"}
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
        f.write("\n")
    processor = {"do_normalize": True, "do_rescale": True, "do_resize": True,
                 "image_mean": [IMAGE_MEAN], "image_processor_type": "ViTImageProcessor",
                 "image_std": [IMAGE_STD], "resample": 2, "rescale_factor": 1 / 255,
                 "size": {"height": IMAGE, "width": IMAGE}}
    with open(os.path.join(folder, "preprocessor_config.json"), "w") as f:
        json.dump(processor, f, indent=2)
        f.write("\n")


def slug(name):
    return "".join(c if c.isalnum() else "-" for c in name.lower())


def predict(model, images):
    with torch.no_grad():
        return torch.cat([model(normalise(images[i:i + 500])).argmax(-1)
                          for i in range(0, len(images), 500)])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--steps", type=int, required=True)
    args = parser.parse_args()
    os.makedirs(os.path.join(args.out, "samples"), exist_ok=True)
    torch.manual_seed(SEED)
    torch.set_num_threads(2)
    generator = torch.Generator().manual_seed(SEED)
    started = time.time()

    train_images, train_labels, test_images, test_labels = load()
    mean, std = dataset_statistics(train_images)
    assert round(mean, 4) == IMAGE_MEAN and round(std, 4) == IMAGE_STD, (mean, std)
    images = torch.from_numpy(train_images[:-VALIDATION].copy())
    labels = torch.from_numpy(train_labels[:-VALIDATION].astype(np.int64))
    validation_images = normalise(torch.from_numpy(train_images[-VALIDATION:].copy()))
    validation_labels = torch.from_numpy(train_labels[-VALIDATION:].astype(np.int64))
    print(f"{len(images)} training, {VALIDATION} validation and {len(test_images)} test images; "
          f"mean {mean:.5f}, std {std:.5f}", flush=True)

    model = Vit()
    decay = [v for k, v in model.params.items() if v.dim() >= 2 and "embeddings" not in k]
    no_decay = [v for k, v in model.params.items() if v.dim() < 2 or "embeddings" in k]
    optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": WEIGHT_DECAY},
                                   {"params": no_decay, "weight_decay": 0.0}],
                                  lr=PEAK_LR, betas=(0.9, 0.999))

    order = torch.randperm(len(images), generator=generator)
    position = 0
    rows = ["step,train_loss,validation_loss,validation_accuracy"]
    for step in range(1, args.steps + 1):
        if step <= WARMUP:
            lr = PEAK_LR * step / WARMUP
        else:
            lr = PEAK_LR * 0.5 * (1 + math.cos(math.pi * (step - WARMUP) / (args.steps - WARMUP)))
        for group in optimizer.param_groups:
            group["lr"] = lr
        if position + BATCH > len(order):
            order, position = torch.randperm(len(images), generator=generator), 0
        chosen = order[position:position + BATCH]
        position += BATCH
        model.train()
        loss = torch.nn.functional.cross_entropy(
            model(normalise(augment(images[chosen], generator))), labels[chosen])
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        validation = ","
        if step % EVAL_EVERY == 0 or step == args.steps:
            with torch.no_grad():
                logits = torch.cat([model(validation_images[i:i + 500])
                                    for i in range(0, VALIDATION, 500)])
                v_loss = torch.nn.functional.cross_entropy(logits, validation_labels).item()
                v_accuracy = (logits.argmax(-1) == validation_labels).float().mean().item()
            validation = f"{v_loss:.4f},{v_accuracy:.4f}"
            print(f"step {step}: loss {loss.item():.3f}, validation loss {v_loss:.3f}, "
                  f"accuracy {v_accuracy:.4f}, {time.time() - started:.0f} s", flush=True)
            save(model, args.out)
        rows.append(f"{step},{loss.item():.4f},{validation}")
        if step % EVAL_EVERY == 0 or step == args.steps:
            with open(os.path.join(HERE, "loss.csv"), "w") as f:
                f.write("\n".join(rows) + "\n")
    save(model, args.out)
    trained = time.time() - started

    predicted = predict(model, torch.from_numpy(test_images.copy())).numpy()
    with open(os.path.join(HERE, "test_predictions.csv"), "w") as f:
        f.write("index,label,predicted\n")
        for i, (label, guess) in enumerate(zip(test_labels, predicted)):
            f.write(f"{i},{label},{guess}\n")
    accuracy = float((predicted == test_labels).mean())

    # The first test image of each class, whatever the model makes of it.
    samples = ["file,test_index,label,predicted"]
    for label, name in enumerate(CLASSES):
        index = int(np.flatnonzero(test_labels == label)[0])
        file = f"{label:02d}-{slug(name)}.png"
        Image.fromarray(test_images[index], mode="L").save(os.path.join(args.out, "samples", file))
        samples.append(f"{file},{index},{label},{predicted[index]}")
    with open(os.path.join(HERE, "samples.csv"), "w") as f:
        f.write("\n".join(samples) + "\n")
    print(f"trained in {trained:.0f} s; test accuracy {accuracy:.4f} "
          f"({int((predicted == test_labels).sum())} of {len(test_labels)})", flush=True)


if __name__ == "__main__":
    main()
