/* Superseded by elf64.h, the core's one ELF64 reader; kept only so that
 * files still naming this header build. New code includes elf64.h. */
#ifndef KIMG_ELF_HOST_H
#define KIMG_ELF_HOST_H

#include "elf64.h"

#endif
