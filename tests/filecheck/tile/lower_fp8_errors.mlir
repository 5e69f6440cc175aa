// lower-fp8 refuses arithmetic on fp8 (the frontend computes it in f32).
// RUN: not %opt %s -p lower-fp8 2>&1 | filecheck %s

func.func @arithmetic(%a: tensor<4xf8E4M3FN>) -> tensor<4xf8E4M3FN> {
  %s = arith.addf %a, %a : tensor<4xf8E4M3FN>
  func.return %s : tensor<4xf8E4M3FN>
}
// CHECK: arith.addf on fp8 values: no target computes on fp8 (compute in float32)
