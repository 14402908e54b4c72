/* SPDX-License-Identifier: BSD-3-Clause */
/* toru/toru.h — all of toru's C interface: toru/core.h (result codes, errors, version),
 * toru/comm.h (all-to-all) and toru/fft.h (parallel FFTs). Include a module's header alone to depend
 * on that module only (pkg-config toru-comm / toru-fft). */
#ifndef TORU_TORU_H
#define TORU_TORU_H

#include "toru/comm.h"
#include "toru/core.h"
#include "toru/fft.h"

#endif /* TORU_TORU_H */
