// tile.inline_asm (tl.inline_asm_elementwise) printed, re-parsed and printed again, and
// lowered by simt-to-ptx to ptx.user_asm: lane by lane with pack 1 (a scalar operand
// broadcast); with pack 4 on bytes, each group of four lanes packed into one 32-bit word
// (bfi) for the text and its word unpacked (bfe) after.
// RUN: %opt %s | %opt | filecheck %s --check-prefix=ROUND
// RUN: %opt %s -p simt-to-ptx | filecheck %s

// ROUND-LABEL: func.func @lanes(
// ROUND: tile.inline_asm "add.rn.f32 $0, $1, $2;" "=f,f,f"(%x, %s) {pack = 1 : i64, pure} : (vector<2xf32>, f32) -> vector<2xf32>
// ROUND: tile.inline_asm "mov.u64 $0, %globaltimer;" "=l"() {pack = 1 : i64} : () -> i64
// CHECK-LABEL: func.func @lanes(
// CHECK: ptx.user_asm "add.rn.f32 $0, $1, $2;" %{{.*}}, %{{.*}} {pure} : (vector<2xf32>, f32) -> vector<2xf32>
// CHECK: ptx.user_asm "mov.u64 $0, %globaltimer;" : () -> i64
func.func @lanes(%p: !tile.ptr<f32>, %q: !tile.ptr<i64>, %s: f32) attributes {simt.num_warps = 1 : i32} {
  %c0 = arith.constant 0 : i32
  %i = arith.constant dense<[0, 1]> : vector<2xi32>
  %x = simt.load %p[%i] : !tile.ptr<f32>, vector<2xi32> -> vector<2xf32>
  %r = tile.inline_asm "add.rn.f32 $0, $1, $2;" "=f,f,f"(%x, %s) {pack = 1 : i64, pure} : (vector<2xf32>, f32) -> vector<2xf32>
  %t = tile.inline_asm "mov.u64 $0, %globaltimer;" "=l"() {pack = 1 : i64} : () -> i64
  simt.store %p[%i], %r : !tile.ptr<f32>, vector<2xi32>, vector<2xf32>
  simt.store %q[%c0], %t : !tile.ptr<i64>, i32, i64
  func.return
}

// CHECK-LABEL: func.func @bytes(
// CHECK-COUNT-3: bfi.b32
// CHECK: ptx.user_asm "and.b32 $0, $1, 0x0f0f0f0f;" %{{.*}} {pure} : (i32) -> i32
// CHECK-COUNT-4: bfe.u32
// CHECK-COUNT-3: bfi.b32
// CHECK: ptx.user_asm
func.func @bytes(%p: !tile.ptr<i8>) attributes {simt.num_warps = 1 : i32} {
  %i = arith.constant dense<[0, 1, 2, 3, 4, 5, 6, 7]> : vector<8xi32>
  %x = simt.load %p[%i] : !tile.ptr<i8>, vector<8xi32> -> vector<8xi8>
  %r = tile.inline_asm "and.b32 $0, $1, 0x0f0f0f0f;" "=r,r"(%x) {pack = 4 : i64, pure} : (vector<8xi8>) -> vector<8xi8>
  simt.store %p[%i], %r : !tile.ptr<i8>, vector<8xi32>, vector<8xi8>
  func.return
}
