// SPDX-License-Identifier: MIT
/*
 * pair: runs two benchmark programs side by side in turns, so that a
 * comparison of their figures is not a comparison of two moments of the
 * machine.
 *
 * usage: pair TURNS -- A [ARG...] -- B [ARG...]
 *
 * A and B (the native run and the xgpu run of one benchmark, started
 * with --turns) wait for a line on their standard input before each
 * sample, print the sample's figure lines, then "END".  pair starts both,
 * asks them for TURNS samples each, in the order A B, B A, A B, ... (a
 * drift of the machine during a pair of samples then falls on either
 * side as often), and prints every figure line as
 *
 *   A|B TURN LINE
 *
 * On the GPU host the rate of a launch loop moves by 10-30% from one
 * second to the next and from one process to the next, while one sample
 * takes a tenth of a second: samples taken in turns, each compared with
 * its neighbour, see through that where medians of separate runs did not
 * (bench/run-bench.sh takes the median of the turns' ratios).
 *
 * Exit status: 0 when both gave every sample and exited 0; 1 otherwise
 * (which and why on standard error); 2 bad usage.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

struct side {
	const char *name;	/* "A" or "B" */
	char **argv;
	pid_t pid;
	int killed;		/* by pair, after the other failed */
	FILE *to, *from;
};

static int start(struct side *s)
{
	int in[2], out[2];

	/* close-on-exec: the other program must not hold this one's
	 * input open (it would never see the end of it) */
	if (pipe(in) || pipe(out) || fcntl(in[1], F_SETFD, FD_CLOEXEC) ||
	    fcntl(out[0], F_SETFD, FD_CLOEXEC)) {
		fprintf(stderr, "pair: pipe: %s\n", strerror(errno));
		return -1;
	}
	s->pid = fork();
	if (s->pid < 0) {
		fprintf(stderr, "pair: fork: %s\n", strerror(errno));
		return -1;
	}
	if (s->pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[0]);
		close(in[1]);
		close(out[0]);
		close(out[1]);
		execvp(s->argv[0], s->argv);
		fprintf(stderr, "pair: %s: %s\n", s->argv[0], strerror(errno));
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	s->to = fdopen(in[1], "w");
	s->from = fdopen(out[0], "r");
	return s->to && s->from ? 0 : -1;
}

/* one sample of s: its lines printed as "NAME TURN LINE"; 0, or -1 when
 * the program ended or failed before its END */
static int sample(struct side *s, int turn)
{
	char line[4096];

	if (fputs("go\n", s->to) == EOF || fflush(s->to) == EOF) {
		fprintf(stderr, "pair: %s (%s) stopped reading at turn %d\n",
			s->name, s->argv[0], turn);
		return -1;
	}
	while (fgets(line, sizeof(line), s->from)) {
		line[strcspn(line, "\n")] = 0;
		if (!strcmp(line, "END"))
			return 0;
		printf("%s %d %s\n", s->name, turn, line);
	}
	fprintf(stderr, "pair: %s (%s) ended before its sample of turn %d\n",
		s->name, s->argv[0], turn);
	return -1;
}

/* close s's input (it exits at the end of it) and wait: 0 when it exited 0 */
static int finish(struct side *s)
{
	int st;

	if (s->pid <= 0)
		return -1;
	if (s->to)
		fclose(s->to);
	if (s->from)
		fclose(s->from);
	if (waitpid(s->pid, &st, 0) < 0)
		return -1;
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return 0;
	if (s->killed)
		return -1;
	if (WIFEXITED(st))
		fprintf(stderr, "pair: %s (%s) exited with %d\n", s->name,
			s->argv[0], WEXITSTATUS(st));
	else
		fprintf(stderr, "pair: %s (%s) killed by signal %d\n",
			s->name, s->argv[0], WTERMSIG(st));
	return -1;
}

int main(int argc, char **argv)
{
	struct side sd[2] = { { .name = "A" }, { .name = "B" } };
	int turns, i, b = 0, bad = 0;
	char *end;

	turns = argc > 1 ? (int)strtol(argv[1], &end, 10) : 0;
	if (argc > 2 && !strcmp(argv[2], "--"))
		for (i = 3; i < argc; i++)
			if (!strcmp(argv[i], "--")) {
				b = i;
				break;
			}
	if (argc < 2 || *end || turns < 1 || !b || b == 3 || b + 1 >= argc) {
		fprintf(stderr, "usage: pair TURNS -- A [ARG...] -- B [ARG...]\n");
		return 2;
	}
	argv[b] = NULL;
	sd[0].argv = argv + 3;
	sd[1].argv = argv + b + 1;
	signal(SIGPIPE, SIG_IGN);
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (i = 0; i < 2 && !bad; i++)
		bad = start(&sd[i]);
	for (int t = 1; t <= turns && !bad; t++) {
		int first = (t - 1) % 2;

		bad = sample(&sd[first], t) || sample(&sd[!first], t);
	}
	for (i = 0; i < 2; i++) {
		if (bad && sd[i].pid > 0 && !kill(sd[i].pid, SIGTERM))
			sd[i].killed = 1;
		if (finish(&sd[i]))
			bad = 1;
	}
	return bad ? 1 : 0;
}
