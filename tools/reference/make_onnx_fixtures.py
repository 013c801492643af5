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
  encoder_block.onnx  Gather, LayerNormalization, a folded Shape subgraph,
                      ReduceMean, Squeeze, Slice, Concat, ConstantOfShape,
                      Cast, Where, Flatten, Unsqueeze, Expand (opset 17)
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

    # An encoder-like block: an embedding lookup, LayerNormalization, the
    # shape subgraph exporters write for a reshape (Shape -> Gather ->
    # Unsqueeze -> Concat, all folded), a mask from ConstantOfShape and
    # Where, Slice, Concat, ReduceMean, Cast, Expand, Squeeze, Flatten.
    E, g_, b_ = w(32, 8), (1 + w(8)).astype(np.float32), w(8)
    nodes = [
        helper.make_node("Gather", ["E", "ids"], ["h"], name="embed", axis=0),
        helper.make_node("LayerNormalization", ["h", "gamma", "beta"], ["n"], name="ln", axis=-1,
                         epsilon=1e-5),
        helper.make_node("Shape", ["n"], ["shp"], name="shape"),
        helper.make_node("Constant", [], ["zero"], name="c0",
                         value=numpy_helper.from_array(np.array(0, dtype=np.int64))),
        helper.make_node("Gather", ["shp", "zero"], ["batch"], name="batch_dim", axis=0),
        helper.make_node("Constant", [], ["axes0"], name="c1",
                         value=numpy_helper.from_array(np.array([0], dtype=np.int64))),
        helper.make_node("Unsqueeze", ["batch", "axes0"], ["batch1"], name="batch_1d"),
        helper.make_node("Constant", [], ["rest"], name="c2",
                         value=numpy_helper.from_array(np.array([-1, 2, 4], dtype=np.int64))),
        helper.make_node("Concat", ["batch1", "rest"], ["target"], name="target_shape", axis=0),
        helper.make_node("Reshape", ["n", "target"], ["heads"], name="split_heads"),
        helper.make_node("ReduceMean", ["heads"], ["m"], name="mean", axes=[3], keepdims=1),
        helper.make_node("Squeeze", ["m", "axes3"], ["m3"], name="squeeze"),
        helper.make_node("Slice", ["m3", "s_start", "s_end", "s_axes"], ["m2"], name="slice"),
        helper.make_node("Concat", ["m2", "m2"], ["mm"], name="concat", axis=2),
        helper.make_node("ConstantOfShape", ["mask_shape"], ["ones"], name="mask_ones",
                         value=numpy_helper.from_array(np.array([1], dtype=np.int64))),
        helper.make_node("Cast", ["ones"], ["mask"], name="mask_bool", to=TensorProto.BOOL),
        helper.make_node("Where", ["mask", "mm", "neg"], ["masked"], name="where"),
        helper.make_node("Flatten", ["masked"], ["flat"], name="flatten", axis=1),
        helper.make_node("Unsqueeze", ["flat", "axes0"], ["flat3"], name="unsqueeze"),
        helper.make_node("Expand", ["flat3", "expand_to"], ["y"], name="expand"),
    ]
    graph = helper.make_graph(
        nodes, "encoder_block",
        [helper.make_tensor_value_info("ids", TensorProto.INT64, [4, 6])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 4, 12])],
        [numpy_helper.from_array(E, "E"), numpy_helper.from_array(g_, "gamma"),
         numpy_helper.from_array(b_, "beta"),
         numpy_helper.from_array(np.array([3], dtype=np.int64), "axes3"),
         numpy_helper.from_array(np.array([0], dtype=np.int64), "s_start"),
         numpy_helper.from_array(np.array([1], dtype=np.int64), "s_end"),
         numpy_helper.from_array(np.array([2], dtype=np.int64), "s_axes"),
         numpy_helper.from_array(np.array([4, 6, 2], dtype=np.int64), "mask_shape"),
         numpy_helper.from_array(np.array(-1e4, dtype=np.float32), "neg"),
         numpy_helper.from_array(np.array([3, 1, 1], dtype=np.int64), "expand_to")])
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), "encoder_block.onnx")

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
