// simt-to-ptx of atomics: native atom.global operations (guarded by the mask), and for
// f32 max/min, which PTX has no atom for, a compare-and-swap loop around max.NaN/min.NaN.
// sem and scope become atom's qualifiers, Triton's acq_rel at gpu scope where absent.
// The ptx ops round-trip.
// RUN: %opt %s -p simt-to-ptx | filecheck %s
// RUN: %opt %s -p simt-to-ptx | %opt --print-op-generic | %opt | filecheck %s

func.func @atomics(%x: !tile.ptr<f32>, %c: !tile.ptr<i32>, %n: i32) attributes {simt.num_warps = 4 : i32} {
  %tid = simt.thread_id : i32
  %tb = vector.broadcast %tid : i32 to vector<2xi32>
  %lanes = arith.constant dense<[0, 128]> : vector<2xi32>
  %i = arith.addi %tb, %lanes : vector<2xi32>
  %nb = vector.broadcast %n : i32 to vector<2xi32>
  %m = tile.cmpi "slt", %i, %nb : vector<2xi32> -> vector<2xi1>
  %v = arith.constant dense<1.0> : vector<2xf32>
  %a = simt.atomic_rmw "add", %x[%i], %v mask %m : vector<2xi1> : !tile.ptr<f32>, vector<2xi32>, vector<2xf32>
  %b = simt.atomic_rmw "max", %x[%i], %a mask %m : vector<2xi1> : !tile.ptr<f32>, vector<2xi32>, vector<2xf32>
  %f = simt.atomic_rmw "min", %x[%i], %b : !tile.ptr<f32>, vector<2xi32>, vector<2xf32>
  %g = simt.atomic_cas %x[%i], %v, %f : !tile.ptr<f32>, vector<2xi32>, vector<2xf32>
  %d = simt.atomic_rmw "umax", %c[%n], %tid : !tile.ptr<i32>, i32, i32
  %e = simt.atomic_rmw "max", %c[%n], %d : !tile.ptr<i32>, i32, i32
  %h = simt.atomic_rmw "xchg", %c[%n], %e : !tile.ptr<i32>, i32, i32
  %k = simt.atomic_rmw "add", %c[%n], %h : !tile.ptr<i32>, i32, i32
  %l = simt.atomic_rmw "umin", %c[%n], %k : !tile.ptr<i32>, i32, i32
  %p = simt.atomic_cas %c[%n], %l, %tid : !tile.ptr<i32>, i32, i32
  %q = simt.atomic_rmw "and", %c[%n], %p sem "relaxed" scope "cta" : !tile.ptr<i32>, i32, i32
  %r = simt.atomic_rmw "or", %c[%n], %q sem "release" : !tile.ptr<i32>, i32, i32
  %s = simt.atomic_rmw "xor", %c[%n], %r scope "sys" : !tile.ptr<i32>, i32, i32
  %t = simt.atomic_cas %c[%n], %s, %tid sem "acquire" : !tile.ptr<i32>, i32, i32
  %u = simt.atomic_rmw "max", %x[%i], %v sem "release" scope "cta" : !tile.ptr<f32>, vector<2xi32>, vector<2xf32>
  func.return
}
// CHECK-LABEL: func.func @atomics(
// CHECK:         %[[M:.*]] = ptx.inst "setp.lt.s32"
// CHECK:         %[[A:.*]] = ptx.atom "atom.acq_rel.gpu.global.add.f32" %[[AX:.*]], %{{.*}} if %[[M]] : vector<2xi1> : vector<2xi64>, vector<2xf32> -> vector<2xf32>
// CHECK:         %[[B:.*]] = ptx.atom_loop "max.NaN.f32" %{{.*}}, %[[A]] if %[[M]] : vector<2xi1> order "acq_rel.gpu" : vector<2xi64>, vector<2xf32>
// CHECK:         %[[F:.*]] = ptx.atom_loop "min.NaN.f32" %{{.*}}, %[[B]] order "acq_rel.gpu" : vector<2xi64>, vector<2xf32>
// CHECK:         ptx.atom "atom.acq_rel.gpu.global.cas.b32" %{{.*}}, %{{.*}}, %[[F]] : vector<2xi64>, vector<2xf32>, vector<2xf32> -> vector<2xf32>
// CHECK:         ptx.atom "atom.acq_rel.gpu.global.max.u32" %{{.*}}, %{{.*}} : i64, i32 -> i32
// CHECK:         ptx.atom "atom.acq_rel.gpu.global.max.s32"
// CHECK:         ptx.atom "atom.acq_rel.gpu.global.exch.b32"
// CHECK:         ptx.atom "atom.acq_rel.gpu.global.add.u32"
// CHECK:         ptx.atom "atom.acq_rel.gpu.global.min.u32"
// CHECK:         ptx.atom "atom.acq_rel.gpu.global.cas.b32" %{{.*}}, %{{.*}}, %{{.*}} : i64, i32, i32 -> i32
// CHECK:         ptx.atom "atom.relaxed.cta.global.and.b32"
// CHECK:         ptx.atom "atom.release.gpu.global.or.b32"
// CHECK:         ptx.atom "atom.acq_rel.sys.global.xor.b32"
// CHECK:         ptx.atom "atom.acquire.gpu.global.cas.b32"
// CHECK:         ptx.atom_loop "max.NaN.f32" %{{.*}}, %{{.*}} order "release.cta" : vector<2xi64>, vector<2xf32>
