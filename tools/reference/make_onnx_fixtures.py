#!/usr/bin/env python3
"""ONNX fixtures for the importer's tests (tests/testdata/onnx/), made in a
venv outside the repository; tests never import onnx:

  python3 -m venv ~/venvs/onnxfix && ~/venvs/onnxfix/bin/pip install onnx numpy
  ~/venvs/onnxfix/bin/python tools/reference/make_onnx_fixtures.py tests/testdata/onnx

Writes, with seeded random weights:
  mlp.onnx            Gemm(transB) + Relu, MatMul + Add, Softmax, with a
                      symbolic batch dimension "batch" (opset 17)
  mlp_reshape.onnx    MatMul on a rank-3 input, Reshape (0 and -1 entries),
                      Transpose, Gelu (opset 20), Tanh, Div, Sub, Neg,
                      Identity and Dropout
  mlp_external.onnx   mlp.onnx with its weights in mlp_external.weights
                      (ONNX external data)
  bad_opset.onnx      opset 11
  unmapped.onnx       a node of type Hardmax
  truncated.onnx      the first 100 bytes of mlp.onnx
  missing_weight.onnx external data whose file is absent
and versions.txt (onnx and numpy). Reference outputs (numpy, f64 then
rounded to f32) are in reference.txt, one "fixture output values..." line,
for when the importer's programs run.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OUT = sys.argv[1]
rng = np.random.default_rng(34)


def w(*shape, gen=None):
    return ((gen or rng).standard_normal(shape) * 0.3).astype(np.float32)


def save(model, name, **kw):
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(OUT, name), **kw)


def mlp(opset=17):
    # Its own seed: every variant (external data, old opset) has the same weights.
    gen = np.random.default_rng(1)
    W1, b1, W2, b2 = w(16, 8, gen=gen), w(16, gen=gen), w(16, 4, gen=gen), w(4, gen=gen)  # W1 is [out, in]: transB
    nodes = [
        helper.make_node("Gemm", ["x", "W1", "b1"], ["h"], name="fc1", transB=1),
        helper.make_node("Relu", ["h"], ["a"], name="act"),
        helper.make_node("MatMul", ["a", "W2"], ["z"], name="fc2"),
        helper.make_node("Add", ["z", "b2"], ["logits"], name="fc2_bias"),
        helper.make_node("Softmax", ["logits"], ["probs"], name="softmax", axis=-1),
    ]
    graph = helper.make_graph(
        nodes, "mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 8])],
        [helper.make_tensor_value_info("probs", TensorProto.FLOAT, ["batch", 4])],
        [numpy_helper.from_array(a, n) for a, n in ((W1, "W1"), (b1, "b1"), (W2, "W2"), (b2, "b2"))])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    return model, (W1, b1, W2, b2)


def reference_mlp(x, W1, b1, W2, b2):
    h = np.maximum(x @ W1.T + b1, 0)
    z = h @ W2 + b2
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def main():
    os.makedirs(OUT, exist_ok=True)
    lines = []
    model, weights = mlp()
    save(model, "mlp.onnx")
    x = rng.standard_normal((4, 8)).astype(np.float32)
    ref = reference_mlp(x.astype(np.float64), *[a.astype(np.float64) for a in weights])
    lines.append("mlp.onnx x " + " ".join("%.9g" % v for v in x.ravel()))
    lines.append("mlp.onnx probs " + " ".join("%.9g" % v for v in ref.astype(np.float32).ravel()))

    ext, _ = mlp()
    onnx.save(ext, os.path.join(OUT, "mlp_external.onnx"), save_as_external_data=True,
              all_tensors_to_one_file=True, location="mlp_external.weights", size_threshold=0)

    Wq, c = w(8, 12), np.array([0, 0, 3, 4], dtype=np.int64)
    nodes = [
        helper.make_node("MatMul", ["x", "Wq"], ["q"], name="proj"),
        helper.make_node("Reshape", ["q", "shape"], ["q4"], name="split_heads"),
        helper.make_node("Transpose", ["q4"], ["qt"], name="heads_first", perm=[0, 2, 1, 3]),
        helper.make_node("Gelu", ["qt"], ["g"], name="gelu", approximate="tanh"),
        helper.make_node("Tanh", ["g"], ["t"], name="tanh"),
        helper.make_node("Div", ["t", "two"], ["d"], name="half"),
        helper.make_node("Sub", ["d", "g"], ["s"], name="diff"),
        helper.make_node("Neg", ["s"], ["n"], name="neg"),
        helper.make_node("Identity", ["n"], ["i"], name="same"),
        helper.make_node("Dropout", ["i"], ["y"], name="drop"),
    ]
    graph = helper.make_graph(
        nodes, "mlp_reshape",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 6, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3, 6, 4])],
        [numpy_helper.from_array(Wq, "Wq"), numpy_helper.from_array(c, "shape"),
         numpy_helper.from_array(np.array(2.0, dtype=np.float32), "two")])
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)]), "mlp_reshape.onnx")

    old, _ = mlp(opset=11)
    save(old, "bad_opset.onnx")

    graph = helper.make_graph(
        [helper.make_node("Hardmax", ["x"], ["y"], name="hard")], "unmapped",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 8])])
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), "unmapped.onnx")

    with open(os.path.join(OUT, "mlp.onnx"), "rb") as f:
        head = f.read(100)
    with open(os.path.join(OUT, "truncated.onnx"), "wb") as f:
        f.write(head)

    missing, _ = mlp()
    onnx.save(missing, os.path.join(OUT, "missing_weight.onnx"), save_as_external_data=True,
              all_tensors_to_one_file=True, location="missing_weight.weights", size_threshold=0)
    os.remove(os.path.join(OUT, "missing_weight.weights"))

    with open(os.path.join(OUT, "reference.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    with open(os.path.join(OUT, "versions.txt"), "w") as f:
        f.write("onnx %s\nnumpy %s\nmade by tools/reference/make_onnx_fixtures.py\n" %
                (onnx.__version__, np.__version__))


if __name__ == "__main__":
    main()
