"""Part of expand-math: rounding, fmod and remainder, hypot and norms, cbrt, nextafter,
ldexp, logb, copysign."""
