/*
 * xint.h - what the explorer's files share (the .c files of explore/; explore.h is the
 * public side).  Not for use outside explore/.
 *
 *   options.c   the explore command's options, xcfg_defaults, xcfg_parse
 *   engine.c    the explorer's setup, one execution (x_exec), its workers
 *   strategy.c  random, PCT, bounded DFS and replay choosers, run_schedule
 *   shrink.c    ddmin and the shrinker
 *   story.c     the steps a violation depends on, in words
 *   cex.c       counterexample files: write, load, failure signature
 *   coverage.c  step pairs and protocol points hit
 *   command.c   `lockstorm explore`: options, then one of the searches
 *   search.c    the search loop (one process)
 *   replay.c    `lockstorm replay`
 *   triage.c    `lockstorm triage`: a failing run's journals to a targeted explore
 *   xstore.c    the store between executions on the real file system
 */
#ifndef LS_XINT_H
#define LS_XINT_H

#include <jansson.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "explore.h"
#include "mfs.h"
#include "../check/checker.h"
#include "../core/journal.h"
#include "../core/prng.h"
#include "../core/sched.h"
#include "../run/rundir.h"
#include "../workloads/config.h"

#define X_REC_CAP (1u << 16)            /* journal records one execution may write */
#define X_MAX_STALLV 4                  /* --stall multiples a run may offer */
#define X_MAX_OPTS (28 * SCHED_MAX_WORKERS) /* runs, stalls/pauses, crashes, errnos, writes, pids, skews, ... */
#define X_LIVELOCK_STEPS 200            /* no-livelock: steps in one op without a sleep or a change */
#define X_STEP_NS 1000                  /* the virtual clock moves 1 us per step */
#define X_QUIET_TIMEOUT_MS 10000        /* real time one step may take before we call it hung */
#define X_DEATHS 64                     /* crashes a worker process lives through (x_kill_one) */
#define X_SHRINK_MAX 4000               /* executions the shrinker may spend */
#define X_PAIRS 65536                   /* coverage: distinct step pairs remembered */
#define X_CALIBRATE 32                  /* schedules the strategies' scale is taken from */
#define X_HOLD_DECISIONS 64             /* a focused stall below the stale age: decisions its worker is kept out */

enum { XS_RANDOM, XS_PCT, XS_DFS, XS_GUIDED };
enum { XO_PASS, XO_FAIL, XO_BOUND, XO_HARNESS };

/* How many workers, and how many operations each one runs. */
struct xshape {
	unsigned n;
	unsigned ops[SCHED_MAX_WORKERS];
};
struct xcfg {
	struct run_config run;   /* protocols, workload, workers, seed, params (time scale 1) */
	unsigned ops;            /* operations per worker */
	int strategy;
	unsigned pct_d, preempt;
	uint64_t schedules;      /* 0: no limit */
	int64_t budget_ms;
	int all;
	unsigned max_stalls, max_crashes, max_steps;
	unsigned maxf[XK__COUNT];/* --max-faults: per kind from XK_ERRNO on (stall, crash: the two above) */
	int maxf_set;            /* --max-faults given: DFS branches on the kinds from XK_ERRNO on only then */
	unsigned maxf_named;     /* bit per kind --max-faults named (or all= set): an adapter's explore offers
				  * errno, short-write and split-write only then */
	int crashes_named;       /* --max-crashes or --max-faults crash= given (external explore: crashes only then) */
	double stallv[X_MAX_STALLV]; /* --stall: the multiples of the stale age a stall may take */
	int pauses;              /* --pauses: a stall may also be a pause (the others go on meanwhile) */
	int points;              /* --points: every protocol point is a decision too */
	unsigned nstallv;
	char outdir[PATH_MAX];
	char dir[PATH_MAX];      /* where our work directory is made */
	char json[PATH_MAX];
	char junit[PATH_MAX]; /* --junit FILE: a testcase per invariant, failing with its counterexamples */
	int quiet, verbose, no_shrink;
	struct xshape replay_sh; /* replay: the file's workers and ops */
	int no_pin;              /* --no-pin: leave the CPU affinity alone */
	unsigned want;           /* --invariant: bit per enum inv_id; 0 = any */
	struct mfs_pers fs;      /* --fs: the modelled file system's personality, or real */
	unsigned jobs, part;     /* -j N: N explorer processes; this one takes schedules part, part+N, .. */
};

/* One line of an execution: a granted step, a stall or a crash. */
struct xstep {
	uint8_t kind;            /* enum xkind */
	uint8_t w;
	uint8_t m;               /* stall: the multiple's index */
	uint8_t state;           /* SS_STEP, SS_SLEEP or SS_BLOCKED when granted */
	uint8_t then_sleeps;     /* the worker went to sleep after this step */
	uint16_t fsop;           /* FSX_*; FSX_OP_COUNT for the start of a worker */
	int32_t result, err;
	uint32_t op_no;
	int64_t now_ns;          /* the clock when it was taken */
	int64_t ms;              /* stall: its length; then_sleeps: how long */
	const char *point;       /* the last protocol point before it */
	uint32_t rec_from, rec_to; /* the journal records it produced */
	char path[SCHED_PATH], path2[SCHED_PATH];
};

struct xexec {
	struct xshape sh;
	struct xchoice *dev;     /* deviations from the default, in decision order */
	size_t ndev, capdev;
	struct xstep *step;
	size_t nstep, capstep;
	uint32_t decisions;
	int outcome;             /* XO_* */
	int inv;                 /* XO_FAIL: the first violated invariant */
	struct check_result res;
	int64_t stall_ms;
	uint64_t atoms;          /* the fault atoms offered at its decisions (xfaults.c: X_ATOM_*) */
	char why[256];
};

struct xopt {
	uint8_t kind, w, m;
};

struct xdec {
	uint32_t at;
	const struct xopt *opt;
	unsigned nopt, nrun;     /* runs first, then stalls, then crashes */
	int current;             /* the worker that ran last, -1 none */
	int current_enabled;
	uint32_t run_steps;      /* RUN decisions so far */
	/* what a focused fault plan aims at (xfaults.c); left zero by the external explorer */
	uint16_t fsop[SCHED_MAX_WORKERS]; /* each worker's announced call, FSX_OP_COUNT when none */
	uint8_t acted[SCHED_MAX_WORKERS]; /* its last step made, opened, wrote or removed something */
};

typedef unsigned (*xchoose)(void *ctx, const struct xdec *d);
/* The hand-off (core/sched.h): a strategy that can let the workers take
 * its next decisions says how (give: a's mode, limit from decision AT on,
 * its PRNG stream) and takes its stream back after (take).  The decisions
 * are those choose would have made. */
struct xahead {
	void (*give)(void *ctx, uint32_t at, struct sched_ahead *a);
	void (*take)(void *ctx, const struct sched_ahead *a);
};

struct explorer {
	struct xcfg *cfg;
	struct sched *s;
	struct arena *arena;
	pid_t self;
	pid_t pgid;              /* the workers' process group (the zygote's) */
	pid_t zygote;            /* the process that forks the workers (engine.c), 0: none yet */
	int zy_req, zy_ans;      /* its pipes: a slot number to it, a pid (or -errno) back */
	int pidfd[SCHED_MAX_WORKERS]; /* each live worker's, to wait for its death (-1: none) */
	unsigned deaths[SCHED_MAX_WORKERS]; /* crashes its process lived through (x_kill_one) */
	cpu_set_t old_cpus;      /* the affinity before we pinned ourselves */
	int pinned;
	struct rundir xrd;       /* our work directory: made, marked and locked as a run's temp folder */
	char xdir[PATH_MAX];     /* its path */
	char store[PATH_MAX];
	char state_file[PATH_MAX];
	int64_t stale_ms[SCHED_MAX_WORKERS];   /* the checker's */
	int64_t budget_ms[SCHED_MAX_WORKERS];
	int64_t stall_base[SCHED_MAX_WORKERS]; /* what "1 stale" is for a stall */
	const char *proto_of[SCHED_MAX_WORKERS];
	const char *rev_of[SCHED_MAX_WORKERS];  /* its slot's label: "flock rev=legacy" */
	uint64_t *pairs;         /* coverage: ordered step pairs across workers (hash set) */
	size_t npairs;
	uint64_t execs, steps;
	uint32_t kest;           /* decisions one execution makes (largest seen) */
	uint64_t dsum;           /* decisions over all executions, for the mean */
	/* What random, PCT and guided scale their draws by: the decisions of the
	 * search's schedules numbered below X_CALIBRATE only (search.c), so that
	 * schedule K's draws are a function of (seed, K) and -j N runs -j 1's schedules */
	uint64_t cal_execs, cal_dsum;
	uint32_t cal_kest;
	uint64_t cal_atoms;      /* the fault atoms those schedules offered: what focused plans aim at */
	uint32_t cal_dec[X_CALIBRATE]; /* their decisions, each (focused plans scale by the median) */
	void (*body)(unsigned id, const char *dir, void *arg); /* explore_script: instead of a workload */
	void *body_arg;
	struct journal ctl_j;    /* the controller's records (stalls, kills) */
	int no_handoff;          /* LOCKSTORM_NO_HANDOFF=1: every decision is the controller's */
	int fork_crash;          /* LOCKSTORM_FORK_CRASH=1: a crash kills the process (x_kill_one) */
	int calibrating;         /* a calibration schedule (search.c): every decision the controller's too */
};
/* Faults in random, PCT and guided's fresh schedules (xfaults.c), drawn per
 * schedule from (seed, schedule number).  Either a mix: a stall in three of
 * four, a crash in one of four (each further one the budgets allow as
 * often), other kinds in slots, each at a decision drawn uniformly over the
 * mean length of an execution; or, in every second schedule from
 * X_CALIBRATE on, a focused plan: one atom, or two, the second soon after
 * the first fired (the atoms are the kinds, an errno split by its call's
 * class, a crash optionally of a worker that just acted), taken in turn
 * from those the first X_CALIBRATE schedules offered. */
enum {
	X_ATOM_STALL, X_ATOM_CRASH,
	X_ATOM_ERRNO,                        /* + the class of the call (x_errno_class) */
	X_ATOM_KIND = X_ATOM_ERRNO + 9,      /* + the kind - XK_SHORT: short-write .. restart */
	X_ATOM__COUNT = X_ATOM_KIND + XK__COUNT - XK_SHORT
};
struct xfaults {
	uint32_t stall_at[4], crash_at[4]; /* UINT32_MAX: none this execution */
	struct prng frng;        /* the other kinds draw from a stream of their own: the stalls and
				  * crashes of a seed stay what they were */
	uint32_t f_at[4];        /* the other kinds: at the first decision from f_at that offers f_kind */
	uint8_t f_kind[4];       /* ... (a focused plan's stalls and crashes too) */
	uint8_t f_aim[4];        /* errno: 1 + the class its call must be; crash: 1, of a worker that just
				  * acted; 0: any */
	uint8_t f_then[4];       /* f_at counts from the decision after the slot before fired */
	uint8_t f_same[4];       /* the worker the slot before hit, when it offers the kind */
	uint8_t f_mult[4];       /* a stall: 1 + the --stall multiple it takes when offered; 0: any */
	int hold_w;              /* random: the worker a focused stall below the stale age hit, kept */
	uint32_t hold_until;     /* from running (the others go on in its window) before this decision */
	int f_prev_w;            /* the worker the last slot that fired hit, -1 none */
	int focus;               /* a focused plan: its atoms, 1 + a (+ 64 (1 + b) for a pair); 0: a mix */
};
struct xrandom {
	struct prng rng;
	struct xfaults f;
};
/* xfaults.c: draw an execution's faults (random, PCT, guided's fresh
 * schedules); at decision D, pick one drawn for it (1, *PICK) or not (0). */
void x_faults_draw(struct xfaults *f, struct prng *r, uint32_t kest, const struct xcfg *cfg, uint64_t sched,
		   const struct explorer *ex);
/* the atoms decision D offers (engine.c ORs them into xexec.atoms); the errno class of a call */
uint64_t x_atoms_offered(const struct xdec *d);
unsigned x_errno_class(unsigned fsop);
/* The calls whose success makes a step one that acted (x_step_acted; the
 * workers of the hand-off judge their own steps by it too). */
#define X_ACT_FSOPS                                                                                    \
	(1u << FSX_MKDIR | 1u << FSX_RMDIR | 1u << FSX_UNLINK | 1u << FSX_RENAME | 1u << FSX_LINK |  \
	 1u << FSX_WRITE | 1u << FSX_OPEN)
/* a step that made, opened, wrote or removed something (a focused crash may aim after it) */
int x_step_acted(const struct xstep *st);
int x_faults_pick(struct xfaults *f, struct prng *r, const struct xdec *d, unsigned *pick);
/* random's run pick at D: uniform, but not the worker a focused stall keeps out while others can run */
unsigned x_faults_run(const struct xfaults *f, struct prng *r, const struct xdec *d);
/* The hand-off (core/sched.h): from decision AT on, where x_faults_pick may
 * pick: a's limit (a stall, a crash, a kind offered at any decision) and
 * what the workers watch for (a kind offered at a call or a start). */
void x_faults_ahead(const struct xfaults *f, uint32_t at, struct sched_ahead *a);
/* -v: ", focused: errno at write, then stall" for a focused plan of random or PCT; "" else */
const char *x_plan_words(const struct xfaults *f, int strategy);
/* PCT (Burckhardt et al., ASPLOS 2010): random distinct priorities d..d+n-1,
 * d-1 change points over the run's steps; at change point i the worker about
 * to run drops to priority i; the highest-priority worker that can run, runs. */
struct xpct {
	struct prng rng;
	struct xfaults f;
	unsigned d;
	uint32_t change[16];
	int32_t prio[SCHED_MAX_WORKERS];
};
/* Bounded DFS over decisions (stateless: every schedule is a re-execution
 * of a prefix), counting preemptions as CHESS does: running another worker
 * while the one that ran last could go on. */
struct dfs_node {
	struct xopt opt[X_MAX_OPTS];
	uint16_t nopt, idx;
	int8_t current;
	uint8_t cur_en;
	uint16_t pre;            /* preemptions before this decision */
};

struct xdfs {
	struct dfs_node *node;
	size_t depth, cap;
	unsigned bound;
	uint64_t mismatch;       /* a prefix that did not replay the same options */
};
enum { OPT_OPS = 256, OPT_PARAM, OPT_STRATEGY, OPT_SCHEDULES, OPT_BUDGET, OPT_ALL, OPT_MAX_STALLS,
       OPT_MAX_CRASHES, OPT_STALL, OPT_MAX_STEPS, OPT_NO_SHRINK, OPT_JSON, OPT_JUNIT, OPT_DIR, OPT_FULL, OPT_TRACE, OPT_INVARIANT, OPT_NO_PIN, OPT_PAUSES, OPT_POINTS, OPT_MAX_FAULTS };
struct strategy {
	struct xrandom rnd;
	struct xpct pct;
	struct xdfs dfs;
	struct xguided *guided;  /* XS_GUIDED */
};

/* guided.c: --strategy guided (coverage-guided mutation of schedules).
 * guided_learn after each schedule (and cover): keeps X when it reached a new
 * abstract state or NEW_PAIRS (new step pairs); 1 when kept.  guided_mutate
 * (for tests): DEV mutated STACK times into the plan guided_plan returns. */
struct xguided;
struct xguided *guided_new(void);
void guided_free(struct xguided *g);
size_t guided_corpus_size(const struct xguided *g);
void guided_seed(struct xguided *g, uint64_t seed, uint64_t k); /* the draws of schedule K */
int guided_run(struct explorer *ex, const struct xcfg *cfg, struct xguided *g, const struct xshape *sh,
	       uint64_t k, struct xexec *x);
int guided_learn(struct xguided *g, const struct explorer *ex, const struct xexec *x, int new_pairs); /* ex may be NULL */
int guided_mutate(struct xguided *g, const struct xchoice *dev, size_t ndev, const struct xchoice *other,
		  size_t nother, unsigned workers, uint32_t span, unsigned nstallv, unsigned stack);
const struct xchoice *guided_plan(const struct xguided *g, size_t *n);

/* parallel.c: -j N, one explorer process per core (docs/explore.md). */
int parallel_explore(struct xcfg *cfg);

/* search.c: one distinct failure; the search (explore_search: one process's,
 * with cfg->jobs/part its share of -j); explore_junit writes --junit. */
struct found {
	uint64_t sig;
	char file[PATH_MAX + 32];
	int inv;
	size_t story_steps;
	uint64_t sched;          /* the schedule it was found in (1-based, over all of -j) */
	char *text;              /* -j child: its story as printed (malloc'd) */
};
int explore_search(const struct xcfg *cfg);
void explore_junit(const struct xcfg *cfg, const struct found *found, size_t nfound, int rc, double elapsed);
const char *strategy_name(int strategy);

extern volatile sig_atomic_t x_interrupted; /* SIGINT/SIGTERM: stop searching and shrinking */

/* engine.c */
struct xshape shape_even(unsigned n, unsigned ops);
void shape_ops(const struct xshape *sh, char *buf, size_t len);
void xexec_free(struct xexec *x);
int x_exec(struct explorer *ex, const struct xshape *sh, xchoose choose, void *ctx, struct xexec *x);
int x_exec_ahead(struct explorer *ex, const struct xshape *sh, xchoose choose, const struct xahead *ah, void *ctx,
		 struct xexec *x);
int explorer_open(struct explorer *ex, struct xcfg *cfg, char *why, size_t len);
void explorer_close(struct explorer *ex);

/* xfaults.c: the fault kinds as choices, and the controller's records (its
 * stalls, kills and faults: x_log on a worker's behalf or the driver's) */
void x_log(struct explorer *ex, unsigned w, uint32_t op, int type, int64_t a, int64_t b, int64_t c);
void x_log_fault(struct explorer *ex, unsigned w, uint32_t op, int kind, const char *point, int64_t c);
struct sched_xf;
struct ck_step;
unsigned x_fault_opts(const struct explorer *ex, struct xopt *opt, unsigned nopt, const int *enabled,
		      const int *live, const unsigned *used);
struct sched_xf x_step_fault(const struct explorer *ex, struct xstep *st, unsigned w);
void x_sticky(struct explorer *ex, struct xstep *st, unsigned w);
int x_prefix_inv(int inv);
struct ck_step *x_livelock_steps(const struct explorer *ex, const struct xexec *x, size_t *n);
#define X_NERRS 7
extern const int x_errs[X_NERRS];      /* the errnos a choice may inject (EPERM, EACCES, ...) */
extern const char *const x_err_names[X_NERRS];
const signed char *x_op_errs(unsigned fsop); /* indices into x_errs for a call, -1 ended */
int64_t x_skew_ms(const struct explorer *ex, unsigned w, unsigned m);
/* The choice granted the worker's step (run, errno, ...). */
/* Worker W's pid as the protocols see it: its pid index (cfg_pid_worker:
 * instances share one) in the numbering of its boot (a restart after a
 * power loss is a new process, with a new number). */
static inline pid_t x_vpid(const struct explorer *ex, unsigned w)
{
	return sched_vpid(ex->s->w[w].boot, cfg_pid_worker(&ex->cfg->run, w));
}

static inline int x_ran(unsigned kind)
{
	return kind == XK_RUN || (kind >= XK_ERRNO && kind <= XK_PIDDEAD);
}
/* A fault from then on (or a sweep): no step is granted (x_sticky). */
static inline int x_sticky_kind(unsigned kind)
{
	return kind >= XK_SWEEP && kind <= XK_OTHERHOST;
}

/* strategy.c */
int dfs_next(struct xdfs *f, uint32_t decisions);
/* Replay: the deviations, else the default (an xchoose; ctx a struct xreplay,
 * next = 0).  The built-in and the external explorer both replay with it. */
struct xreplay {
	const struct xchoice *dev;
	size_t n, next;
};
unsigned choose_replay(void *ctx, const struct xdec *d);
/* The first deviation of DEV[FROM..N) at decision AT or later (UINT32_MAX:
 * none): where replay's and guided's plans stop the hand-off.  Inline: both
 * strategy.c and guided.c use it, and strategy.c calls guided.c. */
static inline uint32_t x_next_dev(const struct xchoice *dev, size_t n, size_t from, uint32_t at)
{
	while (from < n && dev[from].at < at)
		from++;
	return from < n ? dev[from].at : UINT32_MAX;
}
int x_replay(struct explorer *ex, const struct xshape *sh, const struct xchoice *dev, size_t ndev,
	     struct xexec *x);
int x_rerun(struct explorer *ex, struct xexec *x);
int run_schedule(struct explorer *ex, const struct xcfg *cfg, struct strategy *st, const struct xshape *sh,
		 uint64_t k, struct xexec *x);

/* shrink.c */
unsigned shrink(struct explorer *ex, struct xexec *x);

/* story.c */
size_t story_slice(const struct explorer *ex, const struct xexec *x, unsigned char *keep);
size_t story_len(const struct explorer *ex, const struct xexec *x);
void step_words(const struct explorer *ex, const struct xstep *st, char *buf, size_t len);
void step_events(const struct explorer *ex, const struct xstep *st, int *holding, char *buf, size_t len);
/* Record types step_events never tells (a start that journals only these
 * is no line of the story: the workers may decide right after it). */
#define STORY_SILENT_EVENTS ((1ull << EV_WORKER_START) | (1ull << EV_ATTEMPT))
void story_print(FILE *out, const struct explorer *ex, const struct xexec *x, int full, json_t *lines);
void violation_print(FILE *out, const struct xexec *x);
json_t *steps_json(const struct explorer *ex, const struct xexec *x);
/* A spinning worker's loop: the period of its last steps up to LAST (no-livelock's story). */
unsigned x_livelock_period(const struct explorer *ex, const struct xexec *x, unsigned w, size_t last);

/* cex.c */
uint64_t failure_sig(const struct explorer *ex, const struct xexec *x);
json_t *cex_json(const struct explorer *ex, const struct xexec *x, const char *found_by, uint64_t schedule);
void x_base_dir(const struct explorer *ex, char *buf, size_t len);
void x_fs_type(const char *path, char *buf, size_t len);
struct verdict;
int replay_judge(struct verdict *v, int fails, int diverged, const char *want, const char *got);
int cex_load(const char *path, struct xcfg *cfg, struct xchoice **dev, size_t *ndev, json_t **root,
	     char *why, size_t len);

/* xstore.c: an empty store, kept open on *FD (-1 when it was made again:
 * one that cannot be emptied is removed and made again), 0 or -1 errno; then
 * what the workload's setup made, and the store, stamped with the virtual
 * clock's start (FD closed there; -1: opened there; EMPTY: the setup made
 * nothing, the store alone) */
int x_reset_store(const char *store, int *fd);
void x_stamp_store(struct sched *s, const char *store, int fd, int empty);

/* options.c */
extern const char *const kind_names[]; /* "run", "stall", "crash", "pause", "errno", ... by enum xkind */
int x_kind_parse(const char *name);    /* "errno" -> XK_ERRNO, -1 unknown */
void xcfg_defaults(struct xcfg *c);
int builtin_only(const struct run_config *r, char *why, size_t len);
int parse_invariants(const char *list, unsigned *want, char *why, size_t len);
int xcfg_parse(struct xcfg *c, int argc, char **argv, char *why, size_t len);
void say_config(const struct xcfg *c);

/* coverage.c */
void cover(struct explorer *ex, const struct xexec *x);
void coverage_lists(const struct explorer *ex, json_t *hit, json_t *missed, unsigned *nhit, unsigned *nall);

#endif
