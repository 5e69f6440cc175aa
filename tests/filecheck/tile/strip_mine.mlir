// strip-mine: a 1-D elementwise computation on a tile of more than 64 elements per thread
// becomes a loop over chunks of 16 elements per thread (1 warp: 512); a tile that a
// reduction reads, or one of at most 64 per thread (4096 at 2 warps), stays as it is.
// RUN: %opt %s -p 'strip-mine{num-warps=1}' | filecheck %s
// RUN: %opt %s -p 'strip-mine{num-warps=2}' | filecheck %s --check-prefix=TWO

// CHECK-LABEL: func.func @add
// CHECK:       %[[STEP:.*]] = arith.constant 512 : i32
// CHECK-NEXT:  scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %[[STEP]] : i32 {
// CHECK-NEXT:    %[[R:.*]] = tile.range 8, 520 : tensor<512xi32>
// CHECK-NEXT:    %[[AT:.*]] = tile.splat %[[I]] : i32 -> tensor<512xi32>
// CHECK-NEXT:    %[[OFFS:.*]] = arith.addi %[[R]], %[[AT]] : tensor<512xi32>
// CHECK:         %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : tensor<512xf32>
// CHECK:         tile.load %{{.*}} mask %{{.*}} : tensor<512xi1> other %[[ZERO]] {{.*}} -> tensor<512xf32>
// CHECK:         tile.store {{.*}} : tensor<512x!tile.ptr<f32>>, tensor<512xf32>
// CHECK-NEXT:  }
// CHECK-NEXT:  func.return
// TWO-LABEL:   func.func @add
// TWO-NOT:     scf.for
// TWO:         tile.range 8, 4104 : tensor<4096xi32>
func.func @add(%x: !tile.ptr<f32>, %out: !tile.ptr<f32>, %n: i32) {
  %r = tile.range 8, 4104 : tensor<4096xi32>
  %ns = tile.splat %n : i32 -> tensor<4096xi32>
  %m = tile.cmpi "slt", %r, %ns : tensor<4096xi32> -> tensor<4096xi1>
  %zero = arith.constant dense<0.000000e+00> : tensor<4096xf32>
  %xs = tile.splat %x : !tile.ptr<f32> -> tensor<4096x!tile.ptr<f32>>
  %xp = tile.addptr %xs, %r : tensor<4096x!tile.ptr<f32>>, tensor<4096xi32>
  %v = tile.load %xp mask %m : tensor<4096xi1> other %zero : tensor<4096x!tile.ptr<f32>> -> tensor<4096xf32>
  %w = math.exp %v : tensor<4096xf32>
  %os = tile.splat %out : !tile.ptr<f32> -> tensor<4096x!tile.ptr<f32>>
  %op = tile.addptr %os, %r : tensor<4096x!tile.ptr<f32>>, tensor<4096xi32>
  tile.store %op, %w mask %m : tensor<4096xi1> : tensor<4096x!tile.ptr<f32>>, tensor<4096xf32>
  func.return
}

// CHECK-LABEL: func.func @summed
// CHECK-NOT:   scf.for
// CHECK:       tile.reduce
func.func @summed(%x: !tile.ptr<f32>, %out: !tile.ptr<f32>) {
  %r = tile.range 0, 4096 : tensor<4096xi32>
  %xs = tile.splat %x : !tile.ptr<f32> -> tensor<4096x!tile.ptr<f32>>
  %xp = tile.addptr %xs, %r : tensor<4096x!tile.ptr<f32>>, tensor<4096xi32>
  %v = tile.load %xp : tensor<4096x!tile.ptr<f32>> -> tensor<4096xf32>
  %s = tile.reduce %v axis 0 : tensor<4096xf32> -> f32 {
  ^bb0(%a: f32, %b: f32):
    %t = arith.addf %a, %b : f32
    tile.yield %t : f32
  }
  tile.store %out, %s : !tile.ptr<f32>, f32
  func.return
}

// CHECK-LABEL: func.func @small
// CHECK-NOT:   scf.for
// TWO-LABEL:   func.func @small
// TWO-NOT:     scf.for
func.func @small(%x: !tile.ptr<f32>) {
  %r = tile.range 0, 2048 : tensor<2048xi32>
  %xs = tile.splat %x : !tile.ptr<f32> -> tensor<2048x!tile.ptr<f32>>
  %xp = tile.addptr %xs, %r : tensor<2048x!tile.ptr<f32>>, tensor<2048xi32>
  %v = tile.load %xp : tensor<2048x!tile.ptr<f32>> -> tensor<2048xf32>
  %w = arith.addf %v, %v : tensor<2048xf32>
  tile.store %xp, %w : tensor<2048x!tile.ptr<f32>>, tensor<2048xf32>
  func.return
}

// A tile loaded before a loop and used in its body: neither block is mined (the loop's
// would read the whole tile, the function's would have it escape into the loop).
// CHECK-LABEL: func.func @outside
// TWO-LABEL:   func.func @outside
// CHECK:       tile.load {{.*}} -> tensor<4096xf32>
// CHECK:       scf.for
// CHECK:       arith.mulf {{.*}} : tensor<4096xf32>
func.func @outside(%x: !tile.ptr<f32>, %n: i32) {
  %r = tile.range 0, 4096 : tensor<4096xi32>
  %xs = tile.splat %x : !tile.ptr<f32> -> tensor<4096x!tile.ptr<f32>>
  %xp = tile.addptr %xs, %r : tensor<4096x!tile.ptr<f32>>, tensor<4096xi32>
  %v = tile.load %xp : tensor<4096x!tile.ptr<f32>> -> tensor<4096xf32>
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  scf.for %i = %c0 to %n step %c1 : i32 {
    %w = arith.mulf %v, %v : tensor<4096xf32>
    tile.store %xp, %w : tensor<4096x!tile.ptr<f32>>, tensor<4096xf32>
  }
  func.return
}
