// Asynchronous copies, SIMT round trip and simt-to-ptx: a copy of vec lanes moves vec *
// sizeof(T) bytes (16: cp.async.cg, 4 or 8: cp.async.ca) from base + src * size to the
// shared buffer + index * size; a masked-off copy reads 0 bytes (the stage gets zeros).
// RUN: %opt %s | %opt | filecheck %s --check-prefix=ROUND
// RUN: %opt %s -p simt-to-ptx | filecheck %s

func.func @copies(%p: !tile.ptr<f16>, %i: vector<16xi32>, %m: vector<16xi1>) attributes {simt.num_warps = 1 : i32} {
  %h = simt.shared_alloc : memref<1024xf16, 3 : i32>
  // ROUND: simt.cp_async %p[%i] to %{{.*}}[%i] mask %m : vector<16xi1> {vec = 8 : i32} : !tile.ptr<f16>, vector<16xi32>, memref<1024xf16, 3 : i32>, vector<16xi32>
  simt.cp_async %p[%i] to %h[%i] mask %m : vector<16xi1> {vec = 8 : i32} : !tile.ptr<f16>, vector<16xi32>, memref<1024xf16, 3 : i32>, vector<16xi32>
  // ROUND-NEXT: simt.cp_async %p[%i] to %{{.*}}[%i] {vec = 2 : i32}
  simt.cp_async %p[%i] to %h[%i] {vec = 2 : i32} : !tile.ptr<f16>, vector<16xi32>, memref<1024xf16, 3 : i32>, vector<16xi32>
  // ROUND-NEXT: simt.cp_async_commit
  simt.cp_async_commit
  // ROUND-NEXT: simt.cp_async_wait 1
  simt.cp_async_wait 1
  func.return
}

// CHECK: ptx.cp_async %{{.*}}, %{{.*}}, 16, %{{.*}} : vector<2xi32>, vector<2xi64>, vector<2xi32>
// CHECK: ptx.cp_async %{{.*}}, %{{.*}}, 4, %{{.*}} : vector<8xi32>, vector<8xi64>, i32
// CHECK-NEXT: ptx.plain "cp.async.commit_group"
// CHECK-NEXT: ptx.plain "cp.async.wait_group 1"
