// The ptx dialect's shared-memory, barrier and concat ops print and parse back.
// RUN: %opt %s | %opt | filecheck %s

func.func @ok(%v: vector<2xf32>, %p: i1) {
  %s = ptx.shared 256 align 16 : i32
  %x = ptx.ld_shared %s : i32 -> f32
  ptx.st_shared %s, %x if %p : i1 : i32, f32
  ptx.bar
  %c = ptx.concat %v, %v : vector<2xf32>, vector<2xf32> -> vector<4xf32>
  func.return
}
// CHECK-LABEL: func.func @ok(
// CHECK-NEXT:    %s = ptx.shared 256 align 16 : i32
// CHECK-NEXT:    %x = ptx.ld_shared %s : i32 -> f32
// CHECK-NEXT:    ptx.st_shared %s, %x if %p : i1 : i32, f32
// CHECK-NEXT:    ptx.bar
// CHECK-NEXT:    %c = ptx.concat %v, %v : vector<2xf32>, vector<2xf32> -> vector<4xf32>
