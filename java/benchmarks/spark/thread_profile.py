#!/usr/bin/env python3
"""The client's own CPU per GiB read, by thread and stack (issue 34), from SparkBench's perf profiles.

    python3 thread_profile.py DIR            # DIR: SparkBench --profile-threads DIR (run.sh runs this)

For each query run, DIR holds <run>.data (perf record -F 499 --call-graph=fp of the JVM's pid for
exactly the run's window), <run>.map (the JIT's symbols after the run, Compiler.perfmap) and a row
of runs.tsv (bytes fetched from the endpoint, process CPU of the window). Each sample is charged by
`perf script` with that run's map installed as /tmp/perf-<pid>.map, and its CPU time is the
sample's period (cpu-clock: nanoseconds). Samples of the JVM's pid go to (the rule):

1. client threads: threads of the run's own client, by name (comm, 15 characters):
   vended: `vended-storage*` (the JNI library's tokio runtime, its read-ahead and locate threads);
   s3a: S3A_THREADS below (S3A's pools, the analytics accelerator's, the AWS SDK's);
   a *client frame* is a frame of the run's client anywhere on the stack (vended: a Java frame
   of dev.vended.storage.* but the benchmark's own bench.* and testkit.*, or any frame in
   libvended_storage_jni.so; s3a: org.apache.hadoop.fs.s3a.* or software.amazon.* (S3A, the
   analytics accelerator, the SDK and its shaded HTTP client)): the sample is the client's,
   with everything the client calls (JDK sockets, copies, the kernel);
2. Spark's task threads (`Executor task*`), split by stack:
   - client frames on task threads: a client frame on the stack;
   - decoding: the rest (Parquet, Spark, snappy, the JDK on their behalf); native decompressors
     have no frame pointers, so their samples are decoding by their library (DECODERS);
   - unresolved: no Java frame and no known library on the stack (a leaf in libc or the kernel
     whose caller the frame-pointer walk lost: code without frame pointers, e.g. the release
     build of the JNI library); counted apart, it could be either;
3. client frames elsewhere: a client frame on any other thread (e.g. ForkJoinPool.commonPool
   completing a vectored read);
4. other: every other thread of the JVM (GC, JIT compilers, Spark's driver and schedulers, the
   other client's idle pools). Child processes (iptables, run by the benchmark between windows)
   are not the JVM's CPU and are left out; the endpoint is another process and never profiled.

Prints Markdown: per query and client, CPU seconds per GiB fetched (sums over the rounds), the
ours/S3A ratio of the client's total, the threads seen, and a sanity table per run (perf's CPU
against the process CPU of the window from /proc/self/stat).
"""
import collections
import os
import re
import shutil
import subprocess
import sys

OURS_THREADS = ("vended-storage",)
# Prefixes of at most 15 characters (the kernel's comm): S3A's transfer pools
# (s3a-transfer-<bucket>-[un]bounded-pool...), the analytics accelerator's, the SDK's.
S3A_THREADS = ("s3a-transfer", "s3-analytics", "sdk-ScheduledEx", "sdk-async", "aws-java-sdk",
               "idle-connection")
TASK_THREADS = ("Executor task",)
OURS_FRAMES = ("dev.vended.storage.",)
NOT_CLIENT = ("dev.vended.storage.bench.", "dev.vended.storage.testkit.")  # the benchmark itself
OURS_DSO = "libvended_storage_jni"
S3A_FRAMES = ("org.apache.hadoop.fs.s3a.", "software.amazon.")
DECODERS = ("snappy", "zstd", "lz4", "libz.so", "brotli")
JAVA_DSOS = (".map", "libjvm.so", "libjava.so", "libnio.so", "libnet.so", "libzip.so")
GIB = 1 << 30
HEAD = re.compile(r"^(?P<comm>.+?)\s+(?P<pid>\d+)/(?P<tid>\d+)\s+(?P<period>\d+)\s+(?P<event>\S+):\s*$")
FRAME = re.compile(r"^\s*[0-9a-f]+\s+(?P<sym>.*?)\s+\((?P<dso>[^()]*)\)\s*$")


def method(sym):
    """The class.method of a perf-map symbol such as `void a.b.C.m(long, byte[])`."""
    return sym.split("(", 1)[0].rsplit(" ", 1)[-1]


def client_frame(fs, sym, dso):
    if fs == "vended":
        m = method(sym)
        return OURS_DSO in dso or (m.startswith(OURS_FRAMES) and not m.startswith(NOT_CLIENT))
    return method(sym).startswith(S3A_FRAMES)


def thread_class(fs, comm):
    if comm.startswith(TASK_THREADS):
        return "task"
    if fs == "vended" and comm.startswith(OURS_THREADS):
        return "client"
    if fs == "s3a" and comm.startswith(S3A_THREADS) and not comm.startswith(OURS_THREADS):
        return "client"
    return "other"


def samples(data, mapfile, pid):
    """(comm, pid, period, frames) per sample, frames as (sym, dso), leaf first."""
    target = f"/tmp/perf-{pid}.map"
    shutil.copyfile(mapfile, target)
    out = subprocess.run(["perf", "script", "-i", data, "-F", "comm,pid,tid,period,event,ip,sym,dso"],
                         capture_output=True, text=True, errors="replace", check=True).stdout
    head, frames = None, []
    for line in out.splitlines() + [""]:
        if not line.strip():
            if head:
                yield head.group("comm").strip(), int(head.group("pid")), int(head.group("period")), frames
            head, frames = None, []
        elif head is None:
            head = HEAD.match(line)
        else:
            m = FRAME.match(line)
            if m:
                frames.append((m.group("sym"), m.group("dso")))


def charge(fs, comm, frames):
    """The column a JVM sample goes to (the rule in the docstring)."""
    c = thread_class(fs, comm)
    if c == "client":
        return "threads"
    if any(client_frame(fs, s, d) for s, d in frames):
        return "frames" if c == "task" else "elsewhere"
    if c == "other":
        return "other"
    if any(any(x in d for x in DECODERS) for _, d in frames):
        return "decoding"
    if not any(d.endswith(JAVA_DSOS) for _, d in frames):
        return "unresolved"
    return "decoding"


def profile(d, run):
    cols = collections.Counter()
    comms = collections.Counter()
    n = 0
    for comm, pid, period, frames in samples(os.path.join(d, run["run"] + ".data"),
                                             os.path.join(d, run["run"] + ".map"), run["pid"]):
        sec = period / 1e9
        if pid != int(run["pid"]):
            cols["children"] += sec
            continue
        n += 1
        cols[charge(run["fs"], comm, frames)] += sec
        comms[comm] += sec
    cols["samples"] = n
    return cols, comms


def fmt(x, nd=2):
    return f"{x:.{nd}f}"


def main(d):
    with open(os.path.join(d, "runs.tsv")) as f:
        keys = f.readline().rstrip("\n").split("\t")
        runs = [dict(zip(keys, line.rstrip("\n").split("\t"))) for line in f if line.strip()]
    per = collections.defaultdict(lambda: collections.Counter())
    comms = collections.defaultdict(collections.Counter)
    sanity = []
    for r in runs:
        cols, cs = profile(d, r)
        g = per[(r["query"], r["fs"])]
        g.update(cols)
        g["bytes"] += int(r["bytes_fetched"])
        g["rounds"] += 1
        comms[r["fs"]].update(cs)
        jvm = sum(v for k, v in cols.items() if k not in ("children", "samples"))
        sanity.append((r, jvm, cols))
    print("\n### Client CPU per GiB fetched, by thread and stack (perf, issue 34)\n")
    print(f"`{d}`: {len(runs)} runs, perf -F {runs[0]['frequency'] if runs else '?'} --call-graph=fp;"
          " CPU seconds per GiB fetched from the endpoint, sums over the rounds. *client total* ="
          " client threads + client frames on task threads and elsewhere; *ratio* = vended / s3a client total"
          " (with the unresolved task samples added to each: in brackets).\n")
    print("| query | client | rounds | GiB fetched | client threads | client frames on task threads"
          " | client frames elsewhere | **client total** | decoding (task threads) | unresolved (task threads)"
          " | other threads | ratio |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for q in ("scan", "filter", "lookup"):
        tot = {}
        for fs in ("vended", "s3a"):
            g = per.get((q, fs))
            if not g or g["bytes"] <= 0:  # no run, or bytes not counted (no iptables: -1)
                continue
            gib = g["bytes"] / GIB
            own = g["threads"] + g["frames"] + g["elsewhere"]
            tot[fs] = (own / gib, (own + g["unresolved"]) / gib)
        for fs in ("vended", "s3a"):
            if fs not in tot:
                continue
            g = per[(q, fs)]
            gib = g["bytes"] / GIB
            ratio = ""
            if fs == "vended" and "s3a" in tot and tot["s3a"][0] > 0:
                ratio = f"**{tot['vended'][0] / tot['s3a'][0]:.2f}** ({tot['vended'][1] / tot['s3a'][1]:.2f})"
            print(f"| {q} | {fs} | {g['rounds']} | {fmt(gib, 3)} | {fmt(g['threads'] / gib)} | {fmt(g['frames'] / gib)}"
                  f" | {fmt(g['elsewhere'] / gib)} | **{fmt(tot[fs][0])}** | {fmt(g['decoding'] / gib)} | {fmt(g['unresolved'] / gib)}"
                  f" | {fmt(g['other'] / gib)} | {ratio} |")
    print("\nCPU seconds of each run's threads by name (all queries and rounds), top 12 per client:\n")
    for fs in ("vended", "s3a"):
        top = ", ".join(f"`{c}` {v:.1f}" for c, v in comms[fs].most_common(12))
        print(f"- {fs}: {top}")
    print("\nSanity, per run: perf's CPU of the JVM (sum of sample periods; samples / 499 Hz) against"
          " the process CPU of the window (/proc/self/stat utime+stime, 10 ms ticks; the MXBean's):\n")
    print("| run | wall s | perf CPU s | samples/F s | /proc CPU s | MXBean CPU s | perf / proc | children s |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for r, jvm, c in sanity:
        proc = int(r["proc_cpu_ms"]) / 1000
        print(f"| {r['run']} | {float(r['wall_ms']) / 1000:.1f} | {jvm:.2f} | {c['samples'] / int(r['frequency']):.2f}"
              f" | {proc:.2f} | {float(r['cpu_ms']) / 1000:.2f} | {jvm / proc if proc else float('nan'):.2f}"
              f" | {c['children']:.2f} |")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
