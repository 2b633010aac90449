/* SPDX-License-Identifier: MIT */
/*
 * subcommands.h: the xgpu subcommands, one file per subcommand or small
 * group, listed in xgpu.c's table.  Each gets the command line from its
 * own name on and returns the exit status (ctl.h).
 */
#ifndef XGPU_SUBCOMMANDS_H
#define XGPU_SUBCOMMANDS_H

int cmd_attach(int argc, char **argv);		/* cmd_attach.c */
int cmd_detach(int argc, char **argv);
int cmd_list(int argc, char **argv);		/* cmd_list.c */
int cmd_top(int argc, char **argv);
int cmd_sched_credit(int argc, char **argv);	/* cmd_sched.c */
int cmd_stats(int argc, char **argv);		/* cmd_stats.c */
int cmd_vcpu(int argc, char **argv);
int cmd_config(int argc, char **argv);		/* cmd_config.c */

#endif /* XGPU_SUBCOMMANDS_H */
