/* SPDX-License-Identifier: MIT */
/*
 * xgpu_ctl.h: the control protocol between xen-gpubackd and the xgpu CLI.
 * Both include this header; nothing of the protocol is written anywhere
 * else.
 *
 * TRANSPORT.  A SOCK_SEQPACKET Unix socket at XGPU_CTL_PATH_DEFAULT (the
 * daemon's --control, the CLI's -s or $XGPU_CTL_PATH_ENV), mode 0600; the
 * daemon also checks the peer's credentials (SO_PEERCRED uid 0 or its own
 * uid): whoever talks to it can change every guest's share.  One
 * connection carries one request and one reply, each one message.  The
 * daemon waits XGPU_CTL_REQUEST_WAIT_MS for the request, the CLI
 * XGPU_CTL_REPLY_WAIT_MS for the reply.
 *
 * REQUEST.  At most XGPU_CTL_REQUEST_MAX bytes: a command and its
 * arguments, words separated by blanks, at most XGPU_CTL_WORDS_MAX words.
 *
 * REPLY.  Text lines, shorter than XGPU_CTL_REPLY_MAX bytes in all:
 *   ok                          first line on success, then records
 *   error <why>                 the only line on failure
 * A record is one line "<record> key=value key=value ...".  A value is
 * one word: names are sanitised (blanks, '=' and non-ASCII become '_'),
 * and "-" stands for none.  Readers skip records and keys they do not
 * know; keys are added at the end of a record, never reused.
 *
 * COMMANDS, their arguments and the records of their reply:
 *
 * version
 *   version protocol=<XGPUIF_VERSION of xgpuif.h>
 *
 * list                       one record per guest (a Xen domain with all
 *                            its channels, or one local client)
 *   guest kind=xen|local id=<domid|client number> name=<domain or process>
 *         key=<settings key> channels=<n> pids=<pid,pid,...|->
 *         weight=<n> cap=<percent> credit_us=<n> state=<s>
 *         gpu_ms=<n> share_period=<%.1f> share_minute=<%.1f>
 *         mem_mib=<n> quota_mib=<n> calls=<n> calls_per_s=<%.1f>
 *         qdepth=<n> vcpu_weight=<n|-> vcpu_boosts=<n|->
 *   state: the scheduler's UNDER, OVER, CAPPED or IDLE, "-" while it does
 *   not schedule the guest, "idle" for a domain with a Connected device
 *   but no channel yet, "setup" while its device connects.
 *
 * sched-credit [GUEST [WEIGHT CAP [LIMIT_MS]]]
 *   Without GUEST: every guest's settings, and those kept for guests not
 *   here (name and id "-"):
 *     sched key=<key> name=<name|-> id=<n|-> weight=<n> cap=<percent>
 *           limit_ms=<n>
 *   With GUEST (a domain name or id, cN for local client N, a guest's
 *   name or a settings key): its settings; with WEIGHT and CAP (each a
 *   number, or XGPU_CTL_NONE), set them first, and LIMIT_MS (the guest's
 *   GPU time limit, 0..XGPU_CTL_LIMIT_MAX, 0: the daemon's --gpu-limit-ms;
 *   needs the scheduler):
 *     sched key=<key> weight=<n> cap=<percent> limit_ms=<n>
 *   Settings are kept by key: a domain's name ("domid:N" while it has
 *   none), "local:PROCESS" for a local client.  They survive the guest
 *   reconnecting and may be given before it exists.
 *
 * stats
 *   stats sched=on|off kicks=<n> runs=<n> vcpu=on|off
 *   kicks: wake-ups of the scheduler by the workers; runs: its steps.
 *
 * vcpu [on [PCT[:MS]] | off]
 *   Show the VCPU coordinator, or switch it off or on (with a boost of
 *   PCT percent of the weight for MS ms):
 *     vcpu state=off
 *     vcpu state=on backend=<what it drives> boost_pct=<n>
 *          boost_ms=<%.1f> rate=<hypercalls per second per domain>
 *     dom id=<domid> key=<key> gpu_weight=<n> base=<n> target=<n>
 *         current=<n> boosted=0|1 boosts=<n> skipped=<n> hypercalls=<n>
 *
 * config [reload | set DOMAIN KEY=VALUE...]
 *   The rules of xgpu.conf in force (xgpu.conf(5)), after reading the
 *   file again with "reload" (a file that is refused: "error <path>:
 *   <line>: <why>", and the rules in force stay), or after giving domain
 *   DOMAIN (its name) caps at run time with "set": quota-mb, pinned-mb,
 *   images-mb, channels, xs-looks, grant-mb, ahead of its rule's ("error <why>" for another
 *   key, a bad value or a name that is not a domain's):
 *     config path=<file> rules=<n> caps=<n>
 *     rule line=<n> pattern=<pattern> attach=yes|no weight=<n|->
 *          cap=<n|-> quota_mb=<n|-> limit_ms=<n|-> gpu=<n|->
 *          pinned_mb=<n|-> images_mb=<n|-> channels=<n|->
 *          xs_looks=<n|-> grant_mb=<n|->
 *     caps domain=<name> quota_mb=<n|-> pinned_mb=<n|-> images_mb=<n|->
 *          channels=<n|-> xs_looks=<n|-> grant_mb=<n|->
 *   "-": the rule does not say (the daemon's default).
 */
#ifndef XGPU_CTL_H
#define XGPU_CTL_H

/* weights and caps mean what the GPU scheduler makes of them */
#include "xgpu_sched.h"

#define XGPU_CTL_PATH_DEFAULT	"/run/xgpu/control.sock"
#define XGPU_CTL_PATH_ENV	"XGPU_CONTROL"

#define XGPU_CTL_REQUEST_MAX	512u		/* bytes */
#define XGPU_CTL_WORDS_MAX	16
#define XGPU_CTL_REPLY_MAX	(128u * 1024u)	/* a reply is shorter */
#define XGPU_CTL_REQUEST_WAIT_MS	1000
#define XGPU_CTL_REPLY_WAIT_MS	5000

/* first line of a reply */
#define XGPU_CTL_OK		"ok"
#define XGPU_CTL_ERROR		"error"

/* commands */
#define XGPU_CTL_CMD_VERSION		"version"
#define XGPU_CTL_CMD_LIST		"list"
/* a guest's GPU time limit, ms (one day) */
#define XGPU_CTL_LIMIT_MAX	86400000u
#define XGPU_CTL_CMD_SCHED_CREDIT	"sched-credit"
#define XGPU_CTL_CMD_STATS		"stats"
#define XGPU_CTL_CMD_VCPU		"vcpu"
#define XGPU_CTL_CMD_CONFIG		"config"
#define XGPU_CTL_CONFIG_RELOAD		"reload"
#define XGPU_CTL_CONFIG_SET		"set"

/* records */
#define XGPU_CTL_REC_VERSION	"version"
#define XGPU_CTL_REC_GUEST	"guest"
#define XGPU_CTL_REC_SCHED	"sched"
#define XGPU_CTL_REC_STATS	"stats"
#define XGPU_CTL_REC_VCPU	"vcpu"
#define XGPU_CTL_REC_DOM	"dom"
#define XGPU_CTL_REC_CONFIG	"config"
#define XGPU_CTL_REC_RULE	"rule"
#define XGPU_CTL_REC_CAPS	"caps"

/* none: a value that is not there, or an argument that leaves a
 * setting as it is */
#define XGPU_CTL_NONE		"-"

/* a settings key, NUL included */
#define XGPU_CTL_KEY_LEN	80

/*
 * sched-credit: WEIGHT is XGPU_CTL_WEIGHT_MIN..XGPU_SCHED_WEIGHT_MAX
 * (default XGPU_SCHED_WEIGHT_DEFAULT), CAP 0..XGPU_SCHED_CAP_MAX percent
 * of one GPU, XGPU_CTL_CAP_NONE for no cap.  The scheduler has no name
 * for these two.
 */
#define XGPU_CTL_WEIGHT_MIN	1u
#define XGPU_CTL_CAP_NONE	0u

/* vcpu on PCT[:MS]: the boosted weight in percent, the boost in ms (MS
 * left out: the coordinator's default) */
#define XGPU_CTL_BOOST_PCT_MIN	100
#define XGPU_CTL_BOOST_PCT_MAX	10000
#define XGPU_CTL_BOOST_MS_MAX	1000

#endif /* XGPU_CTL_H */
