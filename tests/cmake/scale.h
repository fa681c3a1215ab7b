// The library's interface: scales n floats on the device by k (one launch).
#pragma once
void scale_on_device(float *d, int n, float k);
