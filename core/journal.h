/*
 * journal.h - per-worker binary event journals.
 *
 * One file per worker (journal/w0000.bin ...), plus driver.bin for what the
 * driver observes (kills, watchdog verdicts).  Every record is a fixed 64-byte
 * struct written with ONE write(2) on an O_APPEND descriptor, so a SIGKILL
 * loses nothing that was already recorded.  A record carries a checksum; a
 * reader stops at the first short or corrupt record (a torn tail) and says
 * how many bytes it skipped.
 *
 * Calling sequence:
 *   journal_open(&j, path, worker)   -> 0, or -1 with errno
 *   journal_log(&j, type, op, err, a, b, c)  (sequence and time taken inside)
 *   journal_close(&j)
 * Readers:
 *   journal_read_file(path, &recs, &n, &torn_bytes) -> 0 / -1 errno
 *   journal_read_dir(outdir, &recs, &n, &torn_total) -> all journals, sorted by seq
 */
#ifndef LS_JOURNAL_H
#define LS_JOURNAL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

enum ev_type {
	EV_NONE = 0,
	EV_ATTEMPT,        /* a: attempt number within the op (0 first) */
	EV_ACQUIRED,       /* a: ns the hold started (creation of its lock object, else now) */
	EV_BUSY,           /* acquire gave up within its own budget */
	EV_ACQUIRE_ERROR,  /* err: errno raised by acquire */
	EV_READ,           /* a: revision read (-1 missing), b: own count read; err EBADMSG = unparseable (generation: a version, b 1 = from its cache, 2 = from a writer's kept own write; append: a next seq - 1, b source as EV_APPEND's c, c 1 + the journal bytes it replayed when it wrote that replay to the snapshot, else 0) */
	EV_COMMIT_BEGIN,   /* a: revision about to be written, b: own count (just before rename) */
	EV_COMMIT,         /* a: revision written, b: own count written (rename returned 0) */
	EV_LOST,           /* held() said no: nothing written */
	EV_WRITE_ERROR,    /* err: errno of tmp write or rename */
	EV_RELEASE_BEGIN,
	EV_RELEASED,
	EV_RELEASE_ERROR,  /* err */
	EV_FAULT,          /* a: fault kind, b: point hash, c: duration ms (stall) */
	EV_STEP,           /* trace only. a: point hash, b: fsx op, c: result (0 or errno) */
	EV_APPEND,         /* a: sequence number appended, b: journal byte offset (0: not known), c: where the seq came from (1 cache, 2 snapshot, 3 replay) */
	EV_WORKER_START,   /* a: incarnation, b: host (run --hosts; 0 without) */
	EV_WORKER_EXIT,    /* a: exit status */
	EV_OBJ_CREATE,     /* a lock object was created. a: inode, b: dev */
	EV_OBJ_REMOVE,     /* a lock object was removed. a: inode, b: creator worker (-1 unknown), c: creator's create seq */
	/* Driver records carry worker = JOURNAL_DRIVER; for EV_KILLED and
	 * EV_LIVENESS the victim worker's id is in `op`. */
	EV_KILLED,         /* driver: worker was killed/died. op: victim, a: signal, b: worker pid, c: 1 if by watchdog */
	EV_LIVENESS,       /* driver: watchdog fired. op: victim, a: last point hash, b: ms without progress, c: budget ms */
	EV_STOP,           /* driver: stop flag raised (end of run) */
	EV_READ_BEGIN,     /* a read starts (stale-read: writes finished before it bind it) */
	EV_MUTEX_TAKE,     /* a secondary mutex taken (just after its step). a: its index in the protocol's mutexes, b: its stale age in us (-1: never reclaimed) */
	EV_MUTEX_DROP,     /* a secondary mutex let go (just before its step). a: its index */
	EV_SPIN,           /* a real run's worker made FSX_SPIN_CALLS calls inside one op without a sleep (once per op). a: ns at the half-way call, b: calls */
	EV_DELETE_PENDING, /* explore, --fs model with windows=yes: the worker's call failed (err) only because the directory at its path was removed and is still open somewhere (delete pending); nobody injected it. a: fsx op, b: a worker that has it open (-1: none known) */
	EV__COUNT
};

#define JOURNAL_MAGIC 0x4c43u    /* "CL": format 2, CRC32C checksums */
#define JOURNAL_MAGIC_V1 0x4c53u /* "SL": format 1 (FNV-style checksums), still read */
#define JOURNAL_DRIVER 0xffffu /* worker id of the driver's own journal */

struct jrec {
	uint16_t type;
	uint16_t worker;
	int32_t pid;
	uint32_t op;      /* the worker's op number (0-based, continues across respawns) */
	int32_t err;      /* errno, 0 if none */
	uint64_t seq;     /* global sequence from the shared arena: a total order */
	uint64_t ns;      /* CLOCK_MONOTONIC */
	int64_t a, b, c;  /* payload, per type (see enum ev_type) */
	uint16_t magic;
	uint16_t pad;
	uint32_t check;   /* checksum of the bytes before it */
};

struct journal {
	int fd;
	uint16_t worker;
	int32_t pid;
	unsigned char *map;   /* mapped mode: the current window of the file, else NULL */
	uint64_t map_off;     /* file offset of the window */
	size_t pos;           /* next record's offset inside the window */
	size_t ready;         /* window bytes faulted in so far (from its start) */
	size_t chunk;         /* bytes the next growth faults in */
	struct journal_mem *mem; /* memory mode (explore): records go to a shared buffer */
	struct journal_ring *ring; /* ring mode: map is its buffer, map_off the file offset of buf[0] */
};

/* Memory mode: every worker of one explore execution appends to one buffer
 * in a shared mapping.  Only one worker runs at a time there, so the buffer
 * is in seq order as written; it is what the checker reads. */
struct journal_mem {
	uint32_t n;           /* records written */
	uint32_t cap;
	uint32_t dropped;     /* records that did not fit */
	uint32_t pad;
	struct jrec rec[];
};

/* Ring mode: records are stored into a buffer in memory shared with the
 * driver, and written to the file with one pwrite(2) each time it is full,
 * then the buffer is used again.  A record whose store completed survives
 * the SIGKILL of its writer, as in mapped mode: the driver, which reaps the
 * writer, writes what the buffer holds past the file (journal_ring_settle)
 * before anyone reads the file or opens it again.  Why not mapped mode: the
 * first store into a page the process never touched costs a fault of the
 * hypervisor on some virtual machines (about 10 us), one every 16 ops of
 * `-w hold`; a buffer used again costs none after its first lap. */
#define JOURNAL_RING (32u << 10)
struct journal_ring {
	uint32_t head;           /* bytes of whole records in buf (the writer's; __atomic_* only) */
	uint32_t pad;
	uint64_t base;           /* file offset buf[0] goes to */
	unsigned char buf[JOURNAL_RING] __attribute__((aligned(64)));
};

/* Mapped journals grow in windows of this many bytes (a multiple of the page
 * size and of the record size). */
#define JOURNAL_WINDOW (1u << 20)

const char *journal_type_name(int type);
int journal_type_from_name(const char *name);

int journal_open(struct journal *j, const char *path, unsigned worker);
/* Mapped mode: records are stored into a MAP_SHARED window of the file
 * instead of one write(2) each.  The guarantee is the same - a record whose
 * store completed is in the page cache and survives the SIGKILL of its
 * writer - at a fraction of the cost.  The file is extended a window at a
 * time; journal_close trims it to the records written; a killed writer leaves
 * zeros after its last record, which readers skip (they are not a torn
 * tail).  Reopening appends after the last valid record. */
int journal_open_mapped(struct journal *j, const char *path, unsigned worker);
/* Ring mode (see struct journal_ring): RING lives in memory the driver
 * shares; the file is cut to its valid records and appended to.  journal_close
 * writes what the ring holds. */
int journal_open_ring(struct journal *j, const char *path, unsigned worker, struct journal_ring *ring);
/* The driver's half, after the writer of RING ended (exited or killed): the
 * whole records it left in the ring go to the file at PATH.  0 (nothing
 * left, or written), or -1 with errno. */
int journal_ring_settle(struct journal_ring *ring, const char *path);
/* Memory mode (see struct journal_mem); journal_close only detaches. */
void journal_open_mem(struct journal *j, struct journal_mem *m, unsigned worker, int32_t pid);
void journal_close(struct journal *j);
/* Write one record; seq and ns are taken here.  Returns the record's seq, or 0
 * if it could not be written; errno is left as the caller had it either way. */
uint64_t journal_log(struct journal *j, int type, uint32_t op, int err,
		     int64_t a, int64_t b, int64_t c);
/* Write a fully formed record (seq/ns already set); checksum is filled in. */
int journal_write(struct journal *j, struct jrec *r);

/* CRC32C of the 60 bytes before `check` (format 1 records: its old hash). */
uint32_t journal_checksum(const struct jrec *r);
/* Format 2's CRC32C by the table, never the CPU instruction (tests: the
 * fast checksum must equal it on every record). */
uint32_t journal_checksum_portable(const struct jrec *r);
int journal_valid(const struct jrec *r);
/* How many of r[0, n) are valid before the first that is not: the count of
 * leading records journal_valid passes, judged a block at a time (faster). */
size_t journal_valid_run(const struct jrec *r, size_t n);

/* Read one journal file; stops at the first invalid record. *torn gets the
 * number of trailing bytes that were not a whole valid record. */
int journal_read_file(const char *path, struct jrec **out, size_t *n, size_t *torn);
/* Read every *.bin under DIR/journal, merge, sort by seq. */
int journal_read_dir(const char *outdir, struct jrec **out, size_t *n, size_t *torn,
		     unsigned *files);

/* journal_read_dir, and DAMAGED (when not NULL) gets "" or a one-line
 * reason why a file holds more than a torn tail (journal.c says what a torn
 * tail is): records that cannot be judged. */
int journal_read_dir_checked(const char *outdir, struct jrec **out, size_t *n, size_t *torn,
			     unsigned *files, char *damaged, size_t dlen);

/* Streaming: the records of every *.bin under DIR/journal in seq order, one
 * at a time, holding a small buffer per file and nothing of the history.
 *   journal_cursor_open(outdir, &c, &files)  0, or -1 errno
 *   journal_cursor_next(c, &r)   1 (r valid until the next call), 0 at the end, -1 errno
 *   journal_cursor_run(c, &r, &n)   the same, but 1 gives n >= 1 records r[0..n-1] in a
 *       row (one file's, all before every other file's next): what n calls of
 *       journal_cursor_next would give one at a time; either call may follow the other
 *   journal_cursor_finish(c, &torn, damaged, dlen)  after the end: torn bytes, damage as
 *       journal_read_dir_checked says it; returns 1, or 0 when some file was not in seq
 *       order (what came out was not sorted: read it with journal_read_dir instead)
 *   journal_cursor_close(c) */
struct journal_cursor;
int journal_cursor_open(const char *outdir, struct journal_cursor **c, unsigned *files);
int journal_cursor_next(struct journal_cursor *c, const struct jrec **r);
int journal_cursor_run(struct journal_cursor *c, const struct jrec **r, size_t *n);
size_t journal_cursor_total(const struct journal_cursor *c); /* whole records the files held */
int journal_cursor_finish(struct journal_cursor *c, size_t *torn, char *damaged, size_t dlen);
void journal_cursor_close(struct journal_cursor *c);

/* Print one record as a JSON line. */
void journal_print_json(FILE *f, const struct jrec *r);
/* The same line (newline included, then a NUL) into BUF, which has room for
 * JOURNAL_JSON_MAX bytes; returns its length without the NUL. */
#define JOURNAL_JSON_MAX 2048
size_t journal_format_json(char *buf, const struct jrec *r);

/* The sequence source: journal_log uses this; the arena installs it. */
extern uint64_t (*journal_next_seq)(void);
/* A shared counter as the source: set journal_seq_counter, then
 * journal_next_seq = journal_seq_from_counter (the counter's next value,
 * from 1); journal_log then adds to it in line instead of calling through. */
#ifndef __cplusplus
extern _Atomic uint64_t *journal_seq_counter;
#endif
uint64_t journal_seq_from_counter(void);
/* The record time source: NULL is CLOCK_MONOTONIC; explore installs its
 * virtual clock. */
extern uint64_t (*journal_clock_ns)(void);
/* Optional: names a point from its hash (EV_FAULT b, EV_STEP a, EV_LIVENESS a)
 * in journal_print_json and the checker's examples; NULL prints hashes only. */
extern const char *(*journal_point_name)(uint64_t hash);

#ifdef __cplusplus
}
#endif
#endif
