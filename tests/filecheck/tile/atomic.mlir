// tile.atomic_rmw and tile.atomic_cas printed, re-parsed and printed again, in custom and
// generic form; canonicalize and cse keep them (they write memory) even when unused.
// sem and scope (Triton's memory ordering) print only where given.
// RUN: %opt %s | %opt | filecheck %s
// RUN: %opt %s --print-op-generic | %opt | filecheck %s
// RUN: %opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC
// RUN: %opt %s -p canonicalize,cse | filecheck %s --check-prefix=KEPT

func.func @atomics(%x: !tile.ptr<f32>, %c: !tile.ptr<i32>, %n: i32) {
  %r = tile.range 0, 64 : tensor<64xi32>
  %xs = tile.splat %x : !tile.ptr<f32> -> tensor<64x!tile.ptr<f32>>
  %xp = tile.addptr %xs, %r : tensor<64x!tile.ptr<f32>>, tensor<64xi32>
  %v = arith.constant dense<1.0> : tensor<64xf32>
  %ns = tile.splat %n : i32 -> tensor<64xi32>
  %m = tile.cmpi "slt", %r, %ns : tensor<64xi32> -> tensor<64xi1>
  %a = tile.atomic_rmw "add", %xp, %v mask %m : tensor<64xi1> : tensor<64x!tile.ptr<f32>>, tensor<64xf32>
  %b = tile.atomic_rmw "max", %xp, %a : tensor<64x!tile.ptr<f32>>, tensor<64xf32>
  %one = arith.constant 1 : i32
  %d = tile.atomic_rmw "umin", %c, %one : !tile.ptr<i32>, i32
  %e = tile.atomic_rmw "xchg", %c, %d : !tile.ptr<i32>, i32
  %f = tile.atomic_cas %c, %one, %n : !tile.ptr<i32>, i32
  %g = tile.atomic_cas %xp, %v, %b mask %m : tensor<64xi1> : tensor<64x!tile.ptr<f32>>, tensor<64xf32>
  %h = tile.atomic_rmw "and", %c, %one sem "relaxed" : !tile.ptr<i32>, i32
  %i = tile.atomic_rmw "or", %c, %h scope "cta" : !tile.ptr<i32>, i32
  %j = tile.atomic_rmw "xor", %c, %i sem "release" scope "sys" : !tile.ptr<i32>, i32
  %k = tile.atomic_cas %c, %one, %j sem "acquire" scope "gpu" : !tile.ptr<i32>, i32
  %l = tile.atomic_rmw "add", %xp, %v mask %m : tensor<64xi1> sem "acq_rel" : tensor<64x!tile.ptr<f32>>, tensor<64xf32>
  func.return
}
// CHECK-LABEL: func.func @atomics(
// CHECK:         %a = tile.atomic_rmw "add", %xp, %v mask %m : tensor<64xi1> : tensor<64x!tile.ptr<f32>>, tensor<64xf32>
// CHECK-NEXT:    %b = tile.atomic_rmw "max", %xp, %a : tensor<64x!tile.ptr<f32>>, tensor<64xf32>
// CHECK-NEXT:    %one = arith.constant 1 : i32
// CHECK-NEXT:    %d = tile.atomic_rmw "umin", %c, %one : !tile.ptr<i32>, i32
// CHECK-NEXT:    %e = tile.atomic_rmw "xchg", %c, %d : !tile.ptr<i32>, i32
// CHECK-NEXT:    %f = tile.atomic_cas %c, %one, %n : !tile.ptr<i32>, i32
// CHECK-NEXT:    %g = tile.atomic_cas %xp, %v, %b mask %m : tensor<64xi1> : tensor<64x!tile.ptr<f32>>, tensor<64xf32>
// CHECK-NEXT:    %h = tile.atomic_rmw "and", %c, %one sem "relaxed" : !tile.ptr<i32>, i32
// CHECK-NEXT:    %i = tile.atomic_rmw "or", %c, %h scope "cta" : !tile.ptr<i32>, i32
// CHECK-NEXT:    %j = tile.atomic_rmw "xor", %c, %i sem "release" scope "sys" : !tile.ptr<i32>, i32
// CHECK-NEXT:    %k = tile.atomic_cas %c, %one, %j sem "acquire" scope "gpu" : !tile.ptr<i32>, i32
// CHECK-NEXT:    %l = tile.atomic_rmw "add", %xp, %v mask %m : tensor<64xi1> sem "acq_rel" : tensor<64x!tile.ptr<f32>>, tensor<64xf32>
// GENERIC:       "tile.atomic_rmw"(%xp, %v, %m) <{kind = "add"}> : (tensor<64x!tile.ptr<f32>>, tensor<64xf32>, tensor<64xi1>) -> tensor<64xf32>
// GENERIC:       "tile.atomic_cas"(%c, %one, %n) : (!tile.ptr<i32>, i32, i32) -> i32
// GENERIC:       "tile.atomic_rmw"(%c, %i) <{kind = "xor", sem = "release", scope = "sys"}>
// GENERIC:       "tile.atomic_cas"(%c, %one, %j) <{sem = "acquire", scope = "gpu"}>
// KEPT-COUNT-11: tile.atomic_
