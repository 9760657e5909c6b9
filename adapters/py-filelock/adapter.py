"""py-filelock (Debian python3-filelock) as a lockstorm worker.

kind=0 FileLock: on Linux UnixFileLock, open(O_CREAT|O_TRUNC) of the lock file
       and flock(LOCK_EX|LOCK_NB), polled every 50 ms; release is
       flock(LOCK_UN) + close.  The file is never removed.
kind=1 SoftFileLock: open(O_CREAT|O_EXCL) of the lock file, polled every 50 ms;
       release is close + unlink.  No stale rule: a lock file whose maker died
       stays until someone removes it by hand.

Parameters (LOCKSTORM_PARAM_*, already scaled by --time-scale):
  kind      0      0 or filelock: FileLock, 1 or softfilelock: SoftFileLock
  wait_ms   10000  acquire(timeout=wait_ms / 1000); Timeout is `busy`
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import lockstorm  # noqa: E402

try:
    import filelock
except ImportError as e:
    sys.exit("lockstorm adapter: python3-filelock is not installed (%s); run ./ci/setup" % e)

# the driver passes a choice as its index or its name
KIND = {"0": 0, "filelock": 0, "1": 1, "softfilelock": 1}.get(os.environ.get("LOCKSTORM_PARAM_KIND", "0") or "0")
if KIND is None:
    sys.exit("lockstorm adapter: LOCKSTORM_PARAM_KIND=%s: 0|filelock or 1|softfilelock" % os.environ["LOCKSTORM_PARAM_KIND"])
WAIT_S = lockstorm.param("wait_ms", 10000) / 1000.0
Lock = filelock.SoftFileLock if KIND == 1 else filelock.FileLock
lock = Lock(lockstorm.LOCK, timeout=WAIT_S)


def acquire():
    try:
        lock.acquire()
        return True
    except filelock.Timeout:
        return False


lockstorm.serve(acquire, lock.release)
