// A layout conversion moves through shared memory in as many trips as the target's trip
// size needs (tile-to-simt{shared-trip-bytes}: 16 KiB by default, WGSL's; PTX passes 48 KiB).
// The 16x8 i32 transpose below is 512 bytes: one trip by default, two in 256-byte trips,
// a loop in which each lane stores, and keeps what it loads, in the trip holding its
// number (that trip and the place in it found once, before the loop).
// RUN: %opt %s -p tile-to-simt,canonicalize,cse | filecheck %s --check-prefix=ONE
// RUN: %opt %s -p "tile-to-simt{shared-trip-bytes=256},canonicalize,cse" | filecheck %s --check-prefix=TWO

func.func @transpose(%y: !tile.ptr<i32>) attributes {simt.num_warps = 1 : i32} {
  %r = tile.range 0, 8 : tensor<8xi32, #tile.slice<dim = 1, parent = #tile.blocked<spt = [1, 2], tpw = [4, 8], wpc = [1, 1]>>>
  %e = tile.expand_dims %r, 1 : tensor<8xi32, #tile.slice<dim = 1, parent = #tile.blocked<spt = [1, 2], tpw = [4, 8], wpc = [1, 1]>>> -> tensor<8x1xi32, #tile.blocked<spt = [1, 2], tpw = [4, 8], wpc = [1, 1]>>
  %b = tile.broadcast %e : tensor<8x1xi32, #tile.blocked<spt = [1, 2], tpw = [4, 8], wpc = [1, 1]>> -> tensor<8x16xi32, #tile.blocked<spt = [1, 2], tpw = [4, 8], wpc = [1, 1]>>
  %t = tile.trans %b, [1, 0] : tensor<8x16xi32, #tile.blocked<spt = [1, 2], tpw = [4, 8], wpc = [1, 1]>> -> tensor<16x8xi32, #tile.blocked<spt = [1, 2], tpw = [8, 4], wpc = [1, 1]>>
  %ys = tile.splat %y : !tile.ptr<i32> -> tensor<16x8x!tile.ptr<i32>, #tile.blocked<spt = [1, 2], tpw = [8, 4], wpc = [1, 1]>>
  tile.store %ys, %t : tensor<16x8x!tile.ptr<i32>, #tile.blocked<spt = [1, 2], tpw = [8, 4], wpc = [1, 1]>>, tensor<16x8xi32, #tile.blocked<spt = [1, 2], tpw = [8, 4], wpc = [1, 1]>>
  func.return
}
// ONE-LABEL: func.func @transpose(
// ONE:         simt.shared_alloc : memref<128xi32, 3 : i32>
// ONE-COUNT-1: simt.shared_store
// ONE-NOT:     simt.shared_store
// ONE-COUNT-2: simt.barrier
// ONE-NOT:     simt.barrier
// ONE-NOT:     tile.select

// TWO-LABEL: func.func @transpose(
// TWO:         simt.shared_alloc : memref<64xi32, 3 : i32>
// TWO:         %[[TRIP:.*]] = arith.divui
// TWO-NEXT:    %[[PLACE:.*]] = arith.remui
// TWO:         scf.for %[[I:.*]] = {{.*}} iter_args(%[[KEPT:.*]] = {{.*}})
// TWO-NEXT:      %[[IV:.*]] = vector.broadcast %[[I]]
// TWO-NEXT:      %[[MINE:.*]] = tile.cmpi "eq", %[[TRIP]], %[[IV]]
// TWO-NEXT:      simt.shared_store %{{.*}}[%[[PLACE]]], %{{.*}} mask %[[MINE]]
// TWO-NEXT:      simt.barrier
// TWO-NEXT:      %[[WANTED:.*]] = tile.cmpi "eq", %{{.*}}, %[[IV]]
// TWO-NEXT:      %[[GOT:.*]] = simt.shared_load
// TWO-NEXT:      %[[NEW:.*]] = tile.select %[[WANTED]], %[[GOT]], %[[KEPT]]
// TWO-NEXT:      simt.barrier
// TWO-NEXT:      scf.yield %[[NEW]]
// TWO-NOT:     simt.shared_store
