// SPDX-License-Identifier: MIT
/* Stand-in for rknn_server: carries its version string and waits to be killed. */
#include <stdio.h>
#include <unistd.h>
#ifndef TWIN_VERSION
#define TWIN_VERSION "2.3.2"
#endif
const char twin_version_string[] = "rknn_server version: " TWIN_VERSION " (twin)";
int main(void) { printf("start rknn server, version:%s\n", TWIN_VERSION); fflush(stdout); for (;;) pause(); }
