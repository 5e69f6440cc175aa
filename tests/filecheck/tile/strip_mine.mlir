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

// A 128x128 transpose at 4 warps (128 elements a thread): chunks of 64 rows. The row
// offsets are cut with the rows; the column offsets, their mask and the output's row
// pointers are computed whole before the loop and broadcast into each chunk; the
// transposed chunk is cut along its columns. The one tile.range CSE left for both offset
// vectors is given to each its own copy.
// FOUR:       %[[COLS:.*]] = tile.expand_dims %{{.*}}, 0 : tensor<128xi32> -> tensor<1x128xi32>
// FOUR:       %[[ROWPTR:.*]] = tile.addptr %{{.*}} : tensor<128x1x!tile.ptr<f32>>, tensor<128x1xi32>
// FOUR:       %[[STEP:.*]] = arith.constant 64 : i32
// FOUR-NEXT:  scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %[[STEP]] : i32 {
// FOUR-NEXT:    %[[R:.*]] = tile.range 0, 64 : tensor<64xi32>
// FOUR-NEXT:    %[[AT:.*]] = tile.splat %[[I]] : i32 -> tensor<64xi32>
// FOUR-NEXT:    arith.addi %[[R]], %[[AT]] : tensor<64xi32>
// FOUR:         tile.broadcast %[[COLS]] : tensor<1x128xi32> -> tensor<64x128xi32>
// FOUR:         %[[V:.*]] = tile.load {{.*}} -> tensor<64x128xf32>
// FOUR:         tile.broadcast %[[ROWPTR]] : tensor<128x1x!tile.ptr<f32>> -> tensor<128x64x!tile.ptr<f32>>
// FOUR:         %[[T:.*]] = tile.trans %[[V]], [1, 0] : tensor<64x128xf32> -> tensor<128x64xf32>
// FOUR:         tile.store %{{.*}}, %[[T]] : tensor<128x64x!tile.ptr<f32>>, tensor<128x64xf32>
// FOUR-NEXT:  }
// FOUR-NEXT:  func.return
// RUN: %opt %s -p 'strip-mine{num-warps=4}' | filecheck %s --check-prefix=FOUR
func.func @transpose(%x: !tile.ptr<f32>, %y: !tile.ptr<f32>, %m0: i32, %n0: i32) {
  %r = tile.range 0, 128 : tensor<128xi32>
  %ms = tile.splat %m0 : i32 -> tensor<128xi32>
  %rows = arith.addi %ms, %r : tensor<128xi32>
  %ns = tile.splat %n0 : i32 -> tensor<128xi32>
  %cols = arith.addi %ns, %r : tensor<128xi32>
  %rows2 = tile.expand_dims %rows, 1 : tensor<128xi32> -> tensor<128x1xi32>
  %stride = arith.constant dense<4096> : tensor<128x1xi32>
  %roff = arith.muli %rows2, %stride : tensor<128x1xi32>
  %xs = tile.splat %x : !tile.ptr<f32> -> tensor<128x1x!tile.ptr<f32>>
  %xrow = tile.addptr %xs, %roff : tensor<128x1x!tile.ptr<f32>>, tensor<128x1xi32>
  %xrows = tile.broadcast %xrow : tensor<128x1x!tile.ptr<f32>> -> tensor<128x128x!tile.ptr<f32>>
  %cols2 = tile.expand_dims %cols, 0 : tensor<128xi32> -> tensor<1x128xi32>
  %colsb = tile.broadcast %cols2 : tensor<1x128xi32> -> tensor<128x128xi32>
  %xp = tile.addptr %xrows, %colsb : tensor<128x128x!tile.ptr<f32>>, tensor<128x128xi32>
  %v = tile.load %xp : tensor<128x128x!tile.ptr<f32>> -> tensor<128x128xf32>
  %cols3 = tile.expand_dims %cols, 1 : tensor<128xi32> -> tensor<128x1xi32>
  %coff = arith.muli %cols3, %stride : tensor<128x1xi32>
  %ys = tile.splat %y : !tile.ptr<f32> -> tensor<128x1x!tile.ptr<f32>>
  %yrow = tile.addptr %ys, %coff : tensor<128x1x!tile.ptr<f32>>, tensor<128x1xi32>
  %yrows = tile.broadcast %yrow : tensor<128x1x!tile.ptr<f32>> -> tensor<128x128x!tile.ptr<f32>>
  %rows3 = tile.expand_dims %rows, 0 : tensor<128xi32> -> tensor<1x128xi32>
  %rowsb = tile.broadcast %rows3 : tensor<1x128xi32> -> tensor<128x128xi32>
  %yp = tile.addptr %yrows, %rowsb : tensor<128x128x!tile.ptr<f32>>, tensor<128x128xi32>
  %t = tile.trans %v, [1, 0] : tensor<128x128xf32> -> tensor<128x128xf32>
  tile.store %yp, %t : tensor<128x128x!tile.ptr<f32>>, tensor<128x128xf32>
  func.return
}
