// Each verifier message of ptx.ldmatrix, ptx.mma and ptx.repack, one invalid case per part,
// after a round trip of valid ones.
// RUN: %opt %s --split-input-file --verify-diagnostics | filecheck %s

// CHECK: %{{.*}} = ptx.ldmatrix "ldmatrix.sync.aligned.m8n8.x2.shared.b16" %a : vector<2xi32>
// CHECK: %{{.*}} = ptx.repack %{{.*}} : vector<2xi32> -> vector<4xf16>
// CHECK: ptx.mma "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32" %x, %{{.*}}, %c : vector<4xi32>, vector<2xi32>, vector<4xf32>
func.func @valid(%a: i32, %x: vector<4xi32>, %c: vector<4xf32>) {
  %l = ptx.ldmatrix "ldmatrix.sync.aligned.m8n8.x2.shared.b16" %a : vector<2xi32>
  %h = ptx.repack %l : vector<2xi32> -> vector<4xf16>
  %d = ptx.mma "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32" %x, %l, %c : vector<4xi32>, vector<2xi32>, vector<4xf32>
  func.return
}

// -----

// CHECK: {{^}}ptx.ldmatrix: an ldmatrix of 1, 2 or 4 registers{{$}}
func.func @ldmatrix_count(%a: i32) {
  %l = ptx.ldmatrix "ldmatrix.sync.aligned.m8n8.x4.shared.b16" %a : vector<3xi32>
  func.return
}

// -----

// CHECK: {{^}}ptx.mma: 'wmma.mma' is not an mma.sync or wgmma{{$}}
func.func @mma_opcode(%x: vector<4xi32>, %c: vector<4xf32>) {
  %d = ptx.mma "wmma.mma" %x, %x, %c : vector<4xi32>, vector<4xi32>, vector<4xf32>
  func.return
}

// -----

// CHECK: {{^}}ptx.mma: fragments are 32-bit registers, got vector<8xf16>{{$}}
func.func @mma_halves(%x: vector<8xf16>, %c: vector<4xf32>) {
  %d = ptx.mma "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32" %x, %x, %c : vector<8xf16>, vector<8xf16>, vector<4xf32>
  func.return
}

// -----

// CHECK: {{^}}ptx.repack moves K i32 registers to 2 K 16-bit ones or back{{$}}
func.func @repack_lanes(%x: vector<4xi32>) {
  %h = ptx.repack %x : vector<4xi32> -> vector<4xf16>
  func.return
}
