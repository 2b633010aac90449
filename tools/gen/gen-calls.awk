# SPDX-License-Identifier: MIT
#
# gen-calls.awk: the code of both ends of the wire protocol, from its one
# table of calls (shared-ring/xgpu_calls.def).
#
#   awk -v out=DIR -f tools/gen/gen-calls.awk \
#       shared-ring/xgpuif-ops*.h shared-ring/xgpuif.h \
#       shared-ring/xgpu_calls.def
#
# writes, under DIR:
#   xgpub_calls.h    the worker's handler prototypes, xgpub_h_<NAME>
#   xgpub_calls.c    the worker's dispatch table: per op its name, sizes,
#                    mode, stream field, and a thunk that copies the
#                    arguments out of the request, calls the typed handler
#                    and copies its reply back
#   xgpulib_calls.h  the guest's typed stubs, prototypes
#   xgpulib_calls.c  the guest's typed stubs: xgpulib_call_<NAME> (SYNC,
#                    EXACT, EITHER), xgpulib_post_<NAME> (POSTED, EITHER)
#                    and xgpulib_submit_<NAME> (EITHER: pipelined copies)
#   xgpuif_calls.h   a table describing every op (mode, sizes, stream and
#                    handle fields with their offsets), for tests
#
# A row's optional eighth column BY(fn) or BY(fn, CONST) names the worker
# function that serves the op in place of its own xgpub_h_<NAME>: fn takes
# the handler's arguments (and CONST as a last int); rows that share fn
# must agree on them, and its one prototype is in xgpub_calls.h.
#
# It refuses a table that contradicts itself: duplicate numbers or names,
# an unknown mode, a posted op with a reply, a struct without a size
# assert in xgpuif.h, rows that share a function but not its arguments.
# POSIX awk (mawk, gawk, busybox).

function die(msg) {
	printf "gen-calls: %s:%d: %s\n", FILENAME, FNR, msg > "/dev/stderr"
	failed = 1
	exit 1
}

function trim(s) {
	sub(/^[ \t]+/, "", s)
	sub(/[ \t]+$/, "", s)
	return s
}

# split the arguments of XGPU_CALL(...) on the commas outside parentheses
function split_args(s, a,    n, depth, i, c, cur) {
	n = 0
	depth = 0
	cur = ""
	for (i = 1; i <= length(s); i++) {
		c = substr(s, i, 1)
		if (c == "(")
			depth++
		else if (c == ")")
			depth--
		if (c == "," && depth == 0) {
			a[++n] = trim(cur)
			cur = ""
		} else {
			cur = cur c
		}
	}
	a[++n] = trim(cur)
	return n
}

# "VAR(x)" -> x, with *var set; "none" stays "none"
function strip_var(s) {
	if (s ~ /^VAR\(.*\)$/) {
		var_flag = 1
		return substr(s, 5, length(s) - 5)
	}
	var_flag = 0
	return s
}

# the handle list of IN(...) or OUT(...) in s, or ""
function handle_list(s, tag,    i, rest, j) {
	i = index(s, tag "(")
	if (!i)
		return ""
	rest = substr(s, i + length(tag) + 1)
	j = index(rest, ")")
	if (!j)
		die("unterminated " tag "(")
	return trim(substr(rest, 1, j - 1))
}

FNR == 1 { is_def = FILENAME ~ /\.def$/ }

# the headers: the structs' fields and size asserts
!is_def && /^struct xgpuif_[a-z0-9_]+ \{/ {
	cur_struct = $2
	sub(/^xgpuif_/, "", cur_struct)
	nfields[cur_struct] = 0
	next
}
!is_def && cur_struct != "" && /^\};/ {
	cur_struct = ""
	next
}
!is_def && cur_struct != "" && /;/ {
	# "	type name[N];	/* ... */": the name, padding left out
	fld = $0
	sub(/;.*/, "", fld)
	sub(/\[.*/, "", fld)
	sub(/^.*[ \t*]/, "", fld)
	if (fld !~ /^_pad/)
		field[cur_struct, ++nfields[cur_struct]] = fld
	next
}
!is_def {
	if (match($0, /XGPUIF_ASSERT_SIZE\(struct xgpuif_[a-z0-9_]+,/)) {
		s = substr($0, RSTART, RLENGTH)
		sub(/^XGPUIF_ASSERT_SIZE\(struct xgpuif_/, "", s)
		sub(/,$/, "", s)
		asserted[s] = 1
	}
	next
}

# the table
/^\/\* .* \*\/$/ && $0 !~ /^\/\* (----|SPDX)/ {
	desc = $0
	sub(/^\/\* /, "", desc)
	sub(/ \*\/$/, "", desc)
	next
}

/^XGPU_CALL\(/ {
	line = $0
	sub(/^XGPU_CALL\(/, "", line)
	if (line !~ /\)[ \t]*$/)
		die("a row must be one line ending in ')'")
	sub(/\)[ \t]*$/, "", line)
	nf = split_args(line, f)
	if (nf != 7 && nf != 8)
		die("a row has 7 columns, or 8 with BY(...)")
	num = f[1] + 0
	name = f[2]
	if (f[1] !~ /^[0-9]+$/ || num < 1 || num > 65535)
		die("bad opcode number " f[1])
	if (name !~ /^[A-Z][A-Z0-9_]*$/)
		die("bad op name " name)
	if (num in by_num)
		die("opcode " num " used twice")
	# XGPUIF_OP_MAX follows the last row: the table must be in order
	if (num <= last_num)
		die("opcode " num " after " last_num ": rows go in number order")
	last_num = num
	if (name in seen_name)
		die("op " name " listed twice")
	if (desc == "")
		die("no one-line description above " name)
	by_num[num] = name
	seen_name[name] = 1
	n++
	o_num[n] = num
	o_name[n] = name
	o_desc[n] = desc
	desc = ""
	o_mode[n] = f[3]
	if (f[3] != "SYNC" && f[3] != "EXACT" && f[3] != "POSTED" &&
	    f[3] != "EITHER")
		die(name ": mode " f[3] " is none of SYNC EXACT POSTED EITHER")
	o_args[n] = strip_var(f[4])
	o_avar[n] = var_flag
	o_reply[n] = strip_var(f[5])
	o_rvar[n] = var_flag
	if ((f[3] == "POSTED" || f[3] == "EITHER") && o_reply[n] != "none")
		die(name ": a posted op has no reply")
	if (o_args[n] == "none" && o_avar[n])
		die(name ": VAR(none)")
	if (o_args[n] != "none" && !(o_args[n] in asserted))
		die(name ": struct xgpuif_" o_args[n] " has no size assert")
	if (o_reply[n] != "none" && !(o_reply[n] in asserted))
		die(name ": struct xgpuif_" o_reply[n] " has no size assert")
	s = f[6]
	o_work[n] = 0
	if (s ~ /^WORK\(.*\)$/) {
		o_work[n] = 1
		s = substr(s, 6, length(s) - 6)
	}
	o_stream[n] = s == "-" ? "" : s
	if (o_stream[n] != "" && o_args[n] == "none")
		die(name ": a stream field needs arguments")
	if (f[7] != "-" && f[7] !~ /^(IN|OUT)\(/)
		die(name ": handles are -, IN(...) and/or OUT(...)")
	o_in[n] = handle_list(f[7], "IN")
	o_out[n] = handle_list(f[7], "OUT")
	resolve(n)
	by_column(n, nf == 8 ? f[8] : "")
	next
}

# BY(fn) or BY(fn, CONST): o_by[i] and o_const[i] ("" for none); the first
# row of each fn is by_first[fn], and every row of fn must have its
# argument types and a CONST where it has one
function by_column(i, s,    b, nb) {
	o_by[i] = ""
	o_const[i] = ""
	if (s == "")
		return
	if (s !~ /^BY\(.*\)$/)
		die(o_name[i] ": the eighth column is BY(fn) or BY(fn, CONST)")
	nb = split_args(substr(s, 4, length(s) - 4), b)
	if (nb > 2 || b[1] !~ /^[a-z_][a-z0-9_]*$/ ||
	    (nb == 2 && b[2] !~ /^[A-Za-z_][A-Za-z0-9_]*$/))
		die(o_name[i] ": BY(" b[1] ") names a function and one constant")
	o_by[i] = b[1]
	o_const[i] = nb == 2 ? b[2] : ""
	if (!(b[1] in by_first)) {
		by_first[b[1]] = i
		by_ops[b[1]] = o_name[i]
		return
	}
	by_ops[b[1]] = by_ops[b[1]] ", " o_name[i]
	if (arg_types(i) != arg_types(by_first[b[1]]) ||
	    (o_const[i] == "") != (o_const[by_first[b[1]]] == ""))
		die(o_name[i] ": " b[1] " serves " o_name[by_first[b[1]]] \
		    " with other arguments")
}

# the C types of the handler's arguments, for comparing rows
function arg_types(i,    t, k) {
	t = o_args[i] != "none" && !o_anon[i] ? o_args[i] : "-"
	for (k = 1; k <= o_nres[i]; k++)
		t = t " " (o_res_kind[i, k] == "ANYSTREAM" ? "CUstream" : "e")
	return t " " o_avar[i] " " o_reply[i] " " o_rvar[i]
}

# The IN handles the dispatcher resolves before the handler runs: a
# top-level field of one table kind (or ANYSTREAM); KIND? and A|B are the
# handler's to check.  Sets o_nres[i], o_res_field/kind[i, k] and o_anon[i]
# (1 when every argument is such a handle: the handler gets no args).
function resolve(i,    nh, h, j, fld, kind, k, all) {
	o_nres[i] = 0
	nh = o_in[i] == "" ? 0 : split(o_in[i], h, " ")
	for (j = 1; j <= nh; j++) {
		fld = h[j]
		kind = h[j]
		sub(/:.*/, "", fld)
		sub(/^[^:]*:/, "", kind)
		if (kind ~ /[?|]/ || fld ~ /\./)
			continue
		if (kind !~ /^(CTX|MODULE|LIBRARY|KERNEL|FUNCTION|STREAM|EVENT|BLOB|ARRAY|POOL|GRAPH|GEXEC|GNODE|VMEM|LINK|MIPMAP|SUBARRAY|TEXREF|SURFREF|USEROBJ|RESDESC|GREENCTX|NOTIFY|LOGCB|ANYSTREAM)$/)
			die(o_name[i] ": handle kind " kind " unknown")
		k = ++o_nres[i]
		o_res_field[i, k] = fld
		o_res_kind[i, k] = kind
		resolved[i, fld] = 1
	}
	o_anon[i] = 0
	if (o_nres[i] && !o_avar[i] && (o_args[i] in nfields)) {
		all = 1
		for (j = 1; j <= nfields[o_args[i]]; j++)
			if (!((i, field[o_args[i], j]) in resolved))
				all = 0
		o_anon[i] = all
	}
}

END {
	if (failed)
		exit 1
	if (!n) {
		print "gen-calls: no XGPU_CALL rows" > "/dev/stderr"
		exit 1
	}
	banner = "/* Generated from shared-ring/xgpu_calls.def by " \
		 "tools/gen/gen-calls.awk; do not edit. */"
	back_h()
	back_c()
	guest_h()
	guest_c()
	table_h()
}

# ---- the worker ---------------------------------------------------------

# the prototype of the function that serves op i
function back_proto(i,    p, k) {
	p = "int " (o_by[i] != "" ? o_by[i] : "xgpub_h_" o_name[i]) \
	    "(struct xgpub_worker *w"
	if (o_args[i] != "none" && !o_anon[i])
		p = p ", const struct xgpuif_" o_args[i] " *a"
	for (k = 1; k <= o_nres[i]; k++)
		p = p (o_res_kind[i, k] == "ANYSTREAM" ? ", CUstream " : \
		       ", struct xgpub_hentry *") o_res_field[i, k]
	if (o_avar[i])
		p = p ", const struct xgpub_tail *tail"
	if (o_reply[i] != "none")
		p = p ", struct xgpuif_" o_reply[i] " *r"
	if (o_rvar[i])
		p = p ", struct xgpub_rtail *rt"
	if (o_const[i] != "")
		p = p ", int which"
	return p ")"
}

# a generated header's opening: banner, what it is, include guard, then
# its includes and declarations
function header_open(f, guard, what, preamble) {
	print banner > f
	print "/*\n" what "\n */" > f
	print "#ifndef " guard "\n#define " guard "\n" > f
	print preamble > f
}

function header_close(f, guard) {
	print "\n#endif /* " guard " */" > f
	close(f)
}

function back_h(    f, i) {
	f = out "/xgpub_calls.h"
	header_open(f, "XGPUB_CALLS_H",
		    " * The worker's handlers, one per op: a CUresult value, " \
		    "or XGPUIF_ST_PROTO\n * for a request no well-behaved " \
		    "guest sends (the channel is closed).\n * Arguments are " \
		    "a copy taken out of the ring; the reply starts zeroed.",
		    "#include \"xgpuif.h\"\n\n#include <cuda.h>\n\n" \
		    "struct xgpub_worker;\nstruct xgpub_hentry;\n" \
		    "struct xgpub_tail;\nstruct xgpub_rtail;\n")
	for (i = 1; i <= n; i++) {
		if (o_by[i] == "") {
			print "/* " o_name[i] ": " o_desc[i] " */" > f
			print back_proto(i) ";" > f
			# its definition's first line: XGPUB_HANDLER(NAME)
			print "#define XGPUB_HANDLER_" o_name[i] " " \
			      back_proto(i) > f
			continue
		}
		print "/* " o_name[i] ": " o_desc[i] ": " o_by[i] \
		      (o_const[i] != "" ? ", " o_const[i] : "") " */" > f
		if (by_first[o_by[i]] == i)
			print "/* serves " by_ops[o_by[i]] " */\n" \
			      back_proto(i) ";" > f
	}
	print "\n/* a handler's signature, as the table gives it (the " \
	      "parameters are\n * named w, a, r, and as the handles, " \
	      "tails and stream they take):\n *   XGPUB_HANDLER(MEM_FREE)" \
	      "\n *   {\n *\t...\n *   } */\n#define XGPUB_HANDLER(op) " \
	      "XGPUB_HANDLER_##op" > f
	header_close(f, "XGPUB_CALLS_H")
}

# the thunk's lookup of resolved handle k of op i
function resolve_code(i, k, f,    fld, kind) {
	fld = o_res_field[i, k]
	kind = o_res_kind[i, k]
	if (kind == "ANYSTREAM") {
		print "\tif (xgpub_stream(w, a." fld ", &" fld "))\n" \
		      "\t\treturn CUDA_ERROR_INVALID_HANDLE;" > f
		return
	}
	print "\t" fld " = xgpub_handle_get(&w->h, a." fld ", XGPUB_H_" kind \
	      ");\n\tif (!" fld ")\n\t\treturn " \
	      (kind == "CTX" ? "CUDA_ERROR_INVALID_CONTEXT" : \
	       "CUDA_ERROR_INVALID_HANDLE") ";" > f
}

function back_c(    f, i, k, m, call) {
	f = out "/xgpub_calls.c"
	print banner > f
	print "#include <string.h>\n\n#include \"xgpub_worker.h\"\n" > f
	for (i = 1; i <= n; i++) {
		print "static int call_" o_name[i] "(struct xgpub_worker *w, " \
		      "const uint8_t *in, uint32_t len,\n\t\tuint8_t *out, " \
		      "uint32_t cap, uint32_t *rlen)\n{" > f
		if (o_args[i] != "none")
			print "\tstruct xgpuif_" o_args[i] " a;" > f
		if (o_reply[i] != "none")
			print "\tstruct xgpuif_" o_reply[i] " r;" > f
		if (o_avar[i])
			print "\tstruct xgpub_tail tail;" > f
		if (o_rvar[i])
			print "\tstruct xgpub_rtail rt;" > f
		for (k = 1; k <= o_nres[i]; k++)
			print (o_res_kind[i, k] == "ANYSTREAM" ? \
			       "\tCUstream " : "\tstruct xgpub_hentry *") \
			      o_res_field[i, k] ";" > f
		print "\tint rc;\n" > f
		if (!o_avar[i])
			print "\t(void)len;" > f
		if (o_args[i] == "none")
			print "\t(void)in;" > f
		if (o_reply[i] == "none")
			print "\t(void)out;\n\t(void)cap;" > f
		else if (!o_rvar[i])
			print "\t(void)cap;" > f
		if (o_args[i] != "none")
			print "\tmemcpy(&a, in, sizeof(a));" > f
		for (k = 1; k <= o_nres[i]; k++)
			resolve_code(i, k, f)
		if (o_avar[i])
			print "\ttail.p = in + sizeof(a);\n" \
			      "\ttail.len = len - (uint32_t)sizeof(a);" > f
		if (o_reply[i] != "none")
			print "\tmemset(&r, 0, sizeof(r));" > f
		if (o_rvar[i])
			print "\trt.p = out + sizeof(r);\n" \
			      "\trt.cap = cap - (uint32_t)sizeof(r);\n" \
			      "\trt.len = 0;" > f
		call = (o_by[i] != "" ? o_by[i] : "xgpub_h_" o_name[i]) "(w"
		if (o_args[i] != "none" && !o_anon[i])
			call = call ", &a"
		for (k = 1; k <= o_nres[i]; k++)
			call = call ", " o_res_field[i, k]
		if (o_avar[i])
			call = call ", &tail"
		if (o_reply[i] != "none")
			call = call ", &r"
		if (o_rvar[i])
			call = call ", &rt"
		if (o_const[i] != "")
			call = call ", " o_const[i]
		print "\trc = " call ");" > f
		if (o_reply[i] == "none") {
			print "\t*rlen = 0;" > f
		} else {
			print "\tif (rc)\n\t\treturn rc;" > f
			print "\tmemcpy(out, &r, sizeof(r));" > f
			if (o_rvar[i])
				print "\t/* a handler bug, not the guest's */\n" \
				      "\tif (rt.len > rt.cap)\n" \
				      "\t\trt.len = rt.cap;\n" \
				      "\t*rlen = (uint32_t)sizeof(r) + rt.len;" > f
			else
				print "\t*rlen = (uint32_t)sizeof(r);" > f
		}
		print "\treturn rc;\n}\n" > f
	}
	print "const struct xgpub_op xgpub_ops[XGPUIF_OP_MAX] = {" > f
	for (i = 1; i <= n; i++) {
		m = o_mode[i] == "POSTED" ? "XGPUB_OPM_POSTED" : \
		    o_mode[i] == "EITHER" ? "XGPUB_OPM_SYNC | XGPUB_OPM_POSTED" : \
		    "XGPUB_OPM_SYNC"
		print "\t[XGPUIF_OP_" o_name[i] "] = {" > f
		print "\t\t.name = \"" o_name[i] "\"," > f
		print "\t\t.call = call_" o_name[i] "," > f
		print "\t\t.args_size = " \
		      (o_args[i] == "none" ? "0" : \
		       "sizeof(struct xgpuif_" o_args[i] ")") "," > f
		print "\t\t.reply_size = " \
		      (o_reply[i] == "none" ? "0" : \
		       "sizeof(struct xgpuif_" o_reply[i] ")") "," > f
		print "\t\t.modes = " m "," > f
		print "\t\t.var_args = " o_avar[i] "," > f
		print "\t\t.work = " o_work[i] "," > f
		print "\t\t.stream_off = " \
		      (o_stream[i] == "" ? "-1" : \
		       "offsetof(struct xgpuif_" o_args[i] ", " o_stream[i] ")") \
		      "," > f
		print "\t}," > f
	}
	print "};" > f
	close(f)
}

# ---- the guest -------------------------------------------------------------

function guest_params(i, with_reply,    p) {
	p = ""
	if (o_args[i] != "none")
		p = "const struct xgpuif_" o_args[i] " *a"
	if (o_avar[i])
		p = p ", const struct xgpuif_iov *tail, int ntail"
	if (with_reply && o_reply[i] != "none")
		p = p (p == "" ? "" : ", ") "struct xgpuif_" o_reply[i] " *r"
	if (with_reply && o_rvar[i])
		p = p ", void *rtail, uint32_t rtail_cap, uint32_t *rtail_len"
	return p
}

function guest_proto(i, kind,    p) {
	if (kind == "submit") {
		p = guest_params(i, 0)
		return "CUresult xgpulib_submit_" o_name[i] "(" p \
		       (p == "" ? "" : ", ") "struct xgpulib_waiter *wt)"
	}
	p = guest_params(i, kind == "call")
	return "CUresult xgpulib_" kind "_" o_name[i] "(" \
	       (p == "" ? "void" : p) ")"
}

function guest_kinds(i) {
	if (o_mode[i] == "POSTED")
		return "post"
	if (o_mode[i] == "EITHER")
		return "call post submit"
	return "call"
}

function guest_h(    f, i, k, nk, kinds) {
	f = out "/xgpulib_calls.h"
	header_open(f, "XGPULIB_CALLS_H",
		    " * The guest's typed stubs, one or more per op: " \
		    "xgpulib_call_<NAME> sends\n * a request and waits for " \
		    "its reply (checked to be complete), _post_\n * posts " \
		    "it, _submit_ sends it for a later xgpulib_wait().  They " \
		    "carry\n * the calling thread's current context.",
		    "#include <cuda.h>\n\n#include \"xgpuif.h\"\n\n" \
		    "struct xgpulib_waiter;\n\n" \
		    "/* pieces of the bytes after a VAR request's argument " \
		    "struct */\n#define XGPULIB_MAX_TAIL 3\n")
	for (i = 1; i <= n; i++) {
		print "/* " o_name[i] ": " o_desc[i] " */" > f
		nk = split(guest_kinds(i), kinds, " ")
		for (k = 1; k <= nk; k++)
			print guest_proto(i, kinds[k]) ";" > f
	}
	header_close(f, "XGPULIB_CALLS_H")
}

function guest_iov(i, f) {
	if (o_args[i] == "none") {
		print "\tconst struct xgpuif_iov *iov = NULL;\n" > f
		return 0
	}
	if (o_avar[i]) {
		print "\tstruct xgpuif_iov iov[1 + XGPULIB_MAX_TAIL] = " \
		      "{ { a, sizeof(*a) } };\n" > f
		print "\tif (ntail < 0 || ntail > XGPULIB_MAX_TAIL)\n" \
		      "\t\treturn CUDA_ERROR_INVALID_VALUE;\n" \
		      "\tfor (int i = 0; i < ntail; i++)\n" \
		      "\t\tiov[1 + i] = tail[i];" > f
		return "1 + ntail"
	}
	print "\tstruct xgpuif_iov iov[1] = { { a, sizeof(*a) } };\n" > f
	return 1
}

function guest_c(    f, i, k, nk, kinds, niov, op, rep) {
	f = out "/xgpulib_calls.c"
	print banner > f
	print "#include \"xgpulib_rpc.h\"\n" > f
	for (i = 1; i <= n; i++) {
		op = "XGPUIF_OP_" o_name[i]
		nk = split(guest_kinds(i), kinds, " ")
		for (k = 1; k <= nk; k++) {
			print guest_proto(i, kinds[k]) "\n{" > f
			niov = guest_iov(i, f)
			if (kinds[k] == "post") {
				print "\treturn xgpulib_post(" op ", iov, " \
				      niov ");\n}\n" > f
				continue
			}
			if (kinds[k] == "submit") {
				print "\treturn xgpulib_submit(" op ", iov, " \
				      niov ", wt);\n}\n" > f
				continue
			}
			rep = o_reply[i] == "none" ? "NULL, 0" : \
			      "r, sizeof(*r)"
			rep = rep (o_rvar[i] ? ", rtail, rtail_cap, rtail_len" : \
				   ", NULL, 0, NULL")
			print "\treturn xgpulib_call(" op ", " \
			      (o_mode[i] == "EXACT" ? "true" : "false") \
			      ", iov, " niov ", " rep ");\n}\n" > f
		}
	}
	close(f)
}

# ---- the table, for tests ---------------------------------------------------

function table_fields(i, list, sname, f,    nh, h, j, fld, kinds) {
	nh = split(list, h, " ")
	for (j = 1; j <= nh; j++) {
		fld = h[j]
		kinds = fld
		sub(/:.*/, "", fld)
		sub(/^[^:]*:/, "", kinds)
		if (fld == "" || kinds == "" || fld == kinds)
			die(o_name[i] ": handle " h[j] " is not field:KIND")
		printf "\t\t\t{ offsetof(struct xgpuif_%s, %s), \"%s\" },\n", \
		       sname, fld, kinds > f
	}
	return nh
}

function table_h(    f, i, nin, nout) {
	f = out "/xgpuif_calls.h"
	header_open(f, "XGPUIF_CALLS_H",
		    " * Every op of the wire protocol, described: for tests " \
		    "that walk the\n * whole protocol (forged handles on " \
		    "every op, say).  Not used by the\n * guest library or " \
		    "the worker.", "#include <stddef.h>\n\n#include \"xgpuif.h\"\n")
	print "struct xgpuif_call_field {\n\tsize_t off;\n\tconst char *kinds;" \
	      "\t/* \"STREAM\", \"FUNCTION|KERNEL\", ... */\n};\n" > f
	print "struct xgpuif_call_info {\n\tuint16_t op;\n\tconst char *name;" \
	      "\n\tconst char *mode;\t/* SYNC EXACT POSTED EITHER */" \
	      "\n\tconst char *desc;\n\tsize_t args_size;\n\tint var_args;" \
	      "\n\tsize_t reply_size;\n\tint var_reply;\n\tint work;" \
	      "\n\tlong stream_off;\t/* -1: none */" \
	      "\n\tint nin, nout;\n\tstruct xgpuif_call_field in[6], out[2];" \
	      "\n};\n" > f
	print "static const struct xgpuif_call_info xgpuif_calls[] = {" > f
	for (i = 1; i <= n; i++) {
		print "\t{" > f
		printf "\t\t.op = %d,\n\t\t.name = \"%s\",\n", o_num[i], \
		       o_name[i] > f
		printf "\t\t.mode = \"%s\",\n", o_mode[i] > f
		gsub(/"/, "\\\"", o_desc[i])
		printf "\t\t.desc = \"%s\",\n", o_desc[i] > f
		printf "\t\t.args_size = %s,\n\t\t.var_args = %d,\n", \
		       (o_args[i] == "none" ? "0" : \
			"sizeof(struct xgpuif_" o_args[i] ")"), o_avar[i] > f
		printf "\t\t.reply_size = %s,\n\t\t.var_reply = %d,\n", \
		       (o_reply[i] == "none" ? "0" : \
			"sizeof(struct xgpuif_" o_reply[i] ")"), o_rvar[i] > f
		printf "\t\t.work = %d,\n", o_work[i] > f
		printf "\t\t.stream_off = %s,\n", (o_stream[i] == "" ? "-1" : \
		       "offsetof(struct xgpuif_" o_args[i] ", " o_stream[i] \
		       ")") > f
		print "\t\t.in = {" > f
		nin = o_in[i] == "" ? 0 : table_fields(i, o_in[i], o_args[i], f)
		print "\t\t},\n\t\t.out = {" > f
		nout = o_out[i] == "" ? 0 : table_fields(i, o_out[i], o_reply[i], f)
		print "\t\t}," > f
		if (nin > 6 || nout > 2)
			die(o_name[i] ": more handle fields than the table holds")
		printf "\t\t.nin = %d,\n\t\t.nout = %d,\n", nin, nout > f
		print "\t}," > f
	}
	print "};\n\n#define XGPUIF_NCALLS " \
	      "(sizeof(xgpuif_calls) / sizeof(xgpuif_calls[0]))" > f
	header_close(f, "XGPUIF_CALLS_H")
}
