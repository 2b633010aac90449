/* SPDX-License-Identifier: MIT */
/*
 * check_run.h: the main() every Check suite of tests/unit shares: run the
 * suite, say how it went, exit 0 only if every case passed.  must_fork:
 * the suite's cases rely on running each in a child of its own (CK_FORK),
 * whatever the CK_FORK environment variable says.
 */
#ifndef CHECK_RUN_H
#define CHECK_RUN_H

#include <check.h>
#include <stdbool.h>
#include <stdlib.h>

static inline int check_run(Suite *s, bool must_fork)
{
	SRunner *sr = srunner_create(s);
	int failed;

	if (must_fork)
		srunner_set_fork_status(sr, CK_FORK);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

#endif /* CHECK_RUN_H */
