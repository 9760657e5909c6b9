/*
 * mfs_backend.c - the modelled file system as the seam's backend (see
 * mfs.h): the calls of mfs_core.c and the directory streams of mfs_dir.c
 * in one table, above both, so neither names the other's.
 */
#include "mfs_int.h"

static const struct fsx_backend backend = {
	.mkdir = mfs_op_mkdir,
	.rmdir = mfs_op_rmdir,
	.open = mfs_op_open,
	.close = mfs_op_close,
	.link = mfs_op_link,
	.unlink = mfs_op_unlink,
	.rename = mfs_op_rename,
	.stat = mfs_op_stat,
	.lstat = mfs_op_lstat,
	.statx = mfs_op_statx,
	.access = mfs_op_access,
	.opendir = mfs_opendir,
	.readdir = mfs_readdir,
	.closedir = mfs_closedir,
	.read = mfs_op_read,
	.write = mfs_op_write,
	.pwrite = mfs_op_pwrite,
	.fsync = mfs_fsync,
	.ftruncate = mfs_op_ftruncate,
	.utimensat = mfs_op_utimensat,
	.futimens = mfs_op_futimens,
	.flock = mfs_op_flock,
	.modelled = 1,
};

const struct fsx_backend *mfs_backend(void)
{
	return &backend;
}
