#!/usr/bin/python3
"""What the heads of a Fashion-MNIST ViT checkpoint do, measured on test images.

Loads FOLDER/model.safetensors (the layout train.py writes) into train.py's model and runs it on
the first --images test images, keeping every layer's attention P (heads x 50 x 50; token 0 is
[CLS], token 1 + 7 r + c the patch at row r, column c). Per head, averaged over the images:

  distance    the mean distance, in patches, from a patch query to the patches it attends to:
              sum_j P_ij |pos_i - pos_j| over patch keys j, divided by the weight on patch keys
              (about 3.3 for uniform attention over the 7 x 7 grid; near 0 for a head that looks
              at itself and its neighbours);
  self        the mean weight a patch puts on itself;
  neighbours  the mean weight a patch puts on the (up to 8) patches around it (about 0.13 for
              uniform attention: a local head puts much more there);
  to [CLS]    the mean weight a patch puts on the [CLS] token;
  patch entropy the entropy of a patch's row (over all 50 tokens), in bits (log2 50 = 5.6 for
              uniform);
  patch object the share of a patch row's patch weight on the object's patches (a patch whose
              mean 8-bit value is above 25), divided by the objects' share of the patches;
  CLS entropy the entropy of the [CLS] row, in bits (log2 50 = 5.6 for uniform);
  CLS object  the same for the [CLS] row: 1 is blind to the object, above 1 gathers from it,
              below 1 looks at the background.

Also draws the [CLS] row of every head over one sample image (--figure, a PNG).

Run with Debian's python3 (python3-torch, python3-numpy, python3-matplotlib):
  /usr/bin/python3 training/fashion_vit/analyse_heads.py resources/models/fashion-vit \\
      --figure training/fashion_vit/cls_attention.png
"""

import argparse
import json
import os
import struct

import numpy as np
import torch

import train

OBJECT_THRESHOLD = 25  # the mean 8-bit value above which a patch shows the object


def load(folder):
    model = train.Vit()
    with open(os.path.join(folder, "model.safetensors"), "rb") as f:
        length = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(length))
        data = f.read()
    header.pop("__metadata__", None)
    for name, entry in header.items():
        begin, end = entry["data_offsets"]
        values = np.frombuffer(data[begin:end], dtype="<f4").reshape(entry["shape"])
        model.params[name.replace(".", "/")].data = torch.from_numpy(values.copy())
    return model


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("folder")
    parser.add_argument("--images", type=int, default=1000)
    parser.add_argument("--figure")
    parser.add_argument("--sample", type=int, default=0, help="test index of the figure's image")
    args = parser.parse_args()
    torch.set_num_threads(2)
    model = load(args.folder)
    _, _, test_images, test_labels = train.load()
    images = torch.from_numpy(test_images[:args.images].copy())
    attention = []
    with torch.no_grad():
        model(train.normalise(images), attention)
    grid = train.IMAGE // train.PATCH
    rows, cols = np.divmod(np.arange(grid * grid), grid)
    distance = np.hypot(rows[:, None] - rows[None], cols[:, None] - cols[None])  # 49 x 49
    patch_means = images.float().reshape(-1, grid, train.PATCH, grid, train.PATCH).mean((2, 4))
    objects = (patch_means.reshape(len(images), -1) > OBJECT_THRESHOLD).numpy()  # N x 49
    object_share = objects.mean(1)  # the objects' share of the patches, per image

    neighbours = (distance > 0) & (distance < 1.5)  # 49 x 49: the 8 around each patch
    print("layer, head | distance | self | neighbours | to [CLS] | patch entropy | patch object | "
          "CLS entropy | CLS object")
    for layer, p in enumerate(attention):
        p = p.numpy()  # N x heads x 50 x 50
        for head in range(p.shape[1]):
            ph = p[:, head]
            patch_rows = ph[:, 1:, 1:]
            weight = patch_rows.sum(-1)
            dist = ((patch_rows * distance).sum(-1) / weight).mean()
            self_weight = np.diagonal(patch_rows, axis1=1, axis2=2).mean()
            near = (patch_rows * neighbours).sum(-1).mean()
            to_cls = ph[:, 1:, 0].mean()
            patch_on_objects = (patch_rows * objects[:, None, :]).sum(-1) / weight
            patch_gathering = (patch_on_objects.mean(1) / np.maximum(object_share, 1e-9)).mean()
            rows = ph[:, 1:]
            patch_entropy = -(rows * np.log2(np.maximum(rows, 1e-30))).sum(-1).mean()
            cls = ph[:, 0]
            entropy = -(cls * np.log2(np.maximum(cls, 1e-30))).sum(-1).mean()
            on_objects = (cls[:, 1:] * objects).sum(-1) / cls[:, 1:].sum(-1)
            gathering = (on_objects / np.maximum(object_share, 1e-9)).mean()
            print(f"{layer}, {head} | {dist:.2f} | {self_weight:.3f} | {near:.3f} | "
                  f"{to_cls:.3f} | {patch_entropy:.2f} | {patch_gathering:.2f} | {entropy:.2f} | "
                  f"{gathering:.2f}")
    print(f"uniform attention: distance {distance.mean():.2f}, neighbours "
          f"{neighbours.sum(1).mean() / 50:.3f}, entropy {np.log2(50):.2f}; objects cover "
          f"{100 * object_share.mean():.0f}% of the patches on average")

    if args.figure:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        index = args.sample
        figure, axes = plt.subplots(train.LAYERS, train.HEADS + 1,
                                    figsize=(2 * (train.HEADS + 1), 2 * train.LAYERS))
        for layer in range(train.LAYERS):
            axes[layer, 0].imshow(test_images[index], cmap="gray")
            axes[layer, 0].set_ylabel(f"layer {layer}")
            for head in range(train.HEADS):
                cls = attention[layer][index, head, 0, 1:].numpy().reshape(grid, grid)
                axes[layer, head + 1].imshow(cls, cmap="magma")
                axes[layer, head + 1].set_title(f"head {head}", fontsize=8)
        for axis in axes.flat:
            axis.set_xticks([])
            axis.set_yticks([])
        figure.suptitle(f"[CLS] attention over the patches, test image {index} "
                        f"({train.CLASSES[test_labels[index]]})")
        figure.tight_layout()
        figure.savefig(args.figure, dpi=80)


if __name__ == "__main__":
    main()
