"""Part of expand-math: inverse trigonometric functions, tan, sinpi and cospi."""
