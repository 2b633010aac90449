// SPDX-License-Identifier: MIT
/*
 * silent: a peer that opens TCP connections and says nothing.
 *
 *   silent SRC HOST PORT N SECONDS
 *
 * Binds each of N connections to the local address SRC (127.0.0.2: another
 * host on loopback), connects them to HOST:PORT, prints
 * "silent: N connected" (how many the kernel accepted), then holds them
 * SECONDS and exits 0.  Exits 1 if none connected.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct sockaddr_in src = { .sin_family = AF_INET };
	struct sockaddr_in dst = { .sin_family = AF_INET };
	int n, secs, ok = 0;

	if (argc != 6 || inet_pton(AF_INET, argv[1], &src.sin_addr) != 1 ||
	    inet_pton(AF_INET, argv[2], &dst.sin_addr) != 1) {
		fprintf(stderr, "usage: silent SRC HOST PORT N SECONDS\n");
		return 2;
	}
	dst.sin_port = htons((unsigned short)atoi(argv[3]));
	n = atoi(argv[4]);
	secs = atoi(argv[5]);
	for (int i = 0; i < n; i++) {
		int fd = socket(AF_INET, SOCK_STREAM, 0);

		if (fd < 0)
			break;
		if (bind(fd, (struct sockaddr *)&src, sizeof(src)) ||
		    connect(fd, (struct sockaddr *)&dst, sizeof(dst))) {
			close(fd);
			continue;
		}
		ok++;		/* held open until exit */
	}
	printf("silent: %d connected\n", ok);
	fflush(stdout);
	sleep((unsigned int)secs);
	return ok ? 0 : 1;
}
