// SPDX-License-Identifier: MIT
/*
 * xgpunvml_stubs.c: the names of xgpunvml_stubs.def, each a function that
 * answers NVML_ERROR_NOT_SUPPORTED (NVML_ERROR_UNINITIALIZED before
 * nvmlInit).  Defined without parameters: on the System V ABIs a caller
 * may pass any arguments to such a function, which never looks at them.
 */
#include "xgpunvml.h"

#define XGPUNVML_STUB(name)                                                  \
	__attribute__((visibility("default"))) nvmlReturn_t name(void);      \
	nvmlReturn_t name(void)                                              \
	{                                                                    \
		return xgpunvml_stub();                                      \
	}
#include "xgpunvml_stubs.def"
