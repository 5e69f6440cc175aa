// place-shared: every shared buffer gets its byte offset. Buffers used by two loops one
// after the other share bytes, with a barrier before the second loop's first use; one used
// across both (%kept) keeps its own; alignment holds (%wide: 1024).
// RUN: %opt %s -p place-shared | filecheck %s
// RUN: %opt %s -p place-shared,simt-to-ptx | filecheck %s --check-prefix=PTX

func.func @two_loops(%x: !tile.ptr<f32>, %n: i32) attributes {simt.num_warps = 1 : i32} {
  %tid = simt.thread_id : i32
  %kept = simt.shared_alloc : memref<64xf32, 3 : i32>
  %first = simt.shared_alloc : memref<512xf32, 3 : i32>
  %second = simt.shared_alloc {align = 1024 : i32} : memref<256xf32, 3 : i32>
  %zero = arith.constant 0 : i32
  %one = arith.constant 1 : i32
  %v = simt.load %x[%tid] : !tile.ptr<f32>, i32 -> f32
  simt.shared_store %kept[%tid], %v : memref<64xf32, 3 : i32>, i32, f32
  %a = scf.for %i = %zero to %n step %one iter_args(%s = %v) -> (f32) : i32 {
    simt.shared_store %first[%tid], %s : memref<512xf32, 3 : i32>, i32, f32
    %l = simt.shared_load %first[%tid] : memref<512xf32, 3 : i32>, i32 -> f32
    scf.yield %l : f32
  }
  %b = scf.for %i = %zero to %n step %one iter_args(%s = %a) -> (f32) : i32 {
    simt.shared_store %second[%tid], %s : memref<256xf32, 3 : i32>, i32, f32
    %l = simt.shared_load %second[%tid] : memref<256xf32, 3 : i32>, i32 -> f32
    scf.yield %l : f32
  }
  %k = simt.shared_load %kept[%tid] : memref<64xf32, 3 : i32>, i32 -> f32
  %r = arith.addf %b, %k : f32
  simt.store %x[%tid], %r : !tile.ptr<f32>, i32, f32
  func.return
}
// CHECK-LABEL: func.func @two_loops(
// CHECK:         %kept = simt.shared_alloc {offset = 2048 : i32} : memref<64xf32, 3 : i32>
// CHECK-NEXT:    %first = simt.shared_alloc {offset = 0 : i32} : memref<512xf32, 3 : i32>
// CHECK-NEXT:    %second = simt.shared_alloc {align = 1024 : i32, offset = 0 : i32} : memref<256xf32, 3 : i32>
// CHECK:         %a = scf.for
// CHECK:         }
// CHECK-NEXT:    simt.barrier
// CHECK-NEXT:    %b = scf.for
// PTX-LABEL:   func.func @two_loops(
// PTX:           ptx.shared 256 align 16 at 2048 : i32
// PTX-NEXT:      ptx.shared 2048 align 16 at 0 : i32
// PTX-NEXT:      ptx.shared 1024 align 1024 at 0 : i32
