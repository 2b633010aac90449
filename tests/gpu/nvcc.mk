# What tests/gpu/Makefile and bench/Makefile share: plain nvcc builds
# (static cudart, the default) for sm_90 with compute_90 PTX beside it, so
# that the same binaries run natively and through xgpu's libcuda.so.1.
# Building needs the CUDA toolkit, not a GPU.
#
# The including Makefile sets O (the output folder), PROGS (what `all`
# builds; a PROG with no rule of its own is built from PROG.cu) and OUTPUTS
# (what `clean` removes), then includes this before any rule of its own,
# so that `all` is its default goal.

NVCC      ?= /usr/local/cuda/bin/nvcc

ARCH      := -gencode arch=compute_90,code=[sm_90,compute_90]
# -O2 is for the host side only (device code is -O3 by default); it keeps
# the CPU references of the larger tests fast.
NVCCFLAGS ?= -O2

ifeq ($(V),1)
Q :=
quiet = @:
else
Q := @
quiet = @echo
endif

all: $(addprefix $(O)/,$(PROGS))

$(O):
	$(Q)mkdir -p $@

$(O)/%: %.cu | $(O)
	$(quiet) "  NVCC    $@"
	$(Q)$(NVCC) $(NVCCFLAGS) $(ARCH) -o $@ $<

clean:
	$(Q)rm -f $(addprefix $(O)/,$(OUTPUTS))

.PHONY: all clean
