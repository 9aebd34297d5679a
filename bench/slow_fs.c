/* A shared file system on this machine, for bench/dataset-count --latency: a read-only FUSE
 * pass-through of a local directory that answers every request after a fixed delay, the network
 * round trip of NFS or Lustre, and counts the requests it answers.
 *
 *   bench_slow_fs SOURCE MOUNTPOINT DELAY_US COUNTS_FILE [fuse options, e.g. -f]
 *
 * The model: every operation the kernel sends (lookup, getattr, open, read, release, opendir,
 * readdir...) is one round trip of DELAY_US microseconds; the server answers many at once (one
 * thread per request in flight, up to 64), as a file server does. The kernel keeps what it was
 * told of names and attributes (as an NFS client does within its attribute cache time) but not
 * file data across opens (close-to-open), so a freshly mounted file system is a client that has
 * never seen the dataset: the first lookup of each shard, its open, each read and its release are
 * round trips. bench/dataset-count mounts it afresh for every measurement.
 * On unmount it writes the requests answered to COUNTS_FILE, one "OPERATION N" line each
 * and "requests N" for all. */
#define FUSE_USE_VERSION 31
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static char source[4096];
static long delay_us;
static const char* counts_file;
enum op { op_getattr, op_open, op_read, op_release, op_opendir, op_readdir, op_releasedir, op_count };
static const char* const op_names[op_count] = {"getattr", "open",    "read",      "release",
                                               "opendir", "readdir", "releasedir"};
static atomic_long requests[op_count];

static void round_trip(enum op op) {
  atomic_fetch_add(&requests[op], 1);
  struct timespec t = {delay_us / 1000000, (delay_us % 1000000) * 1000};
  while (nanosleep(&t, &t) != 0 && errno == EINTR) {
  }
}

static int real_path(const char* path, char* out, size_t n) {
  return snprintf(out, n, "%s%s", source, path) < (int)n ? 0 : -ENAMETOOLONG;
}

static void* on_init(struct fuse_conn_info* conn, struct fuse_config* cfg) {
  // Lookups in one directory at once, as a network file system client sends them.
  if (conn->capable & FUSE_CAP_PARALLEL_DIROPS) conn->want |= FUSE_CAP_PARALLEL_DIROPS;
  cfg->entry_timeout = 3600;
  cfg->attr_timeout = 3600;
  cfg->negative_timeout = 3600;
  cfg->kernel_cache = 0;
  cfg->use_ino = 1;
  return NULL;
}

static void on_destroy(void* data) {
  (void)data;
  FILE* f = fopen(counts_file, "w");
  if (f) {
    long total = 0;
    for (int i = 0; i < op_count; ++i) {
      fprintf(f, "%s %ld\n", op_names[i], atomic_load(&requests[i]));
      total += atomic_load(&requests[i]);
    }
    fprintf(f, "requests %ld\n", total);
    fclose(f);
  }
}

static int on_getattr(const char* path, struct stat* st, struct fuse_file_info* fi) {
  round_trip(op_getattr);
  if (fi) return fstat((int)fi->fh, st) == 0 ? 0 : -errno;
  char p[4096];
  int r = real_path(path, p, sizeof p);
  if (r) return r;
  return lstat(p, st) == 0 ? 0 : -errno;
}

static int on_open(const char* path, struct fuse_file_info* fi) {
  round_trip(op_open);
  if ((fi->flags & O_ACCMODE) != O_RDONLY) return -EROFS;
  char p[4096];
  int r = real_path(path, p, sizeof p);
  if (r) return r;
  int fd = open(p, fi->flags);
  if (fd < 0) return -errno;
  fi->fh = (uint64_t)fd;
  return 0;
}

static int on_read(const char* path, char* buf, size_t size, off_t off, struct fuse_file_info* fi) {
  (void)path;
  round_trip(op_read);
  ssize_t n = pread((int)fi->fh, buf, size, off);
  return n < 0 ? -errno : (int)n;
}

static int on_release(const char* path, struct fuse_file_info* fi) {
  (void)path;
  round_trip(op_release);
  close((int)fi->fh);
  return 0;
}

static int on_opendir(const char* path, struct fuse_file_info* fi) {
  round_trip(op_opendir);
  char p[4096];
  int r = real_path(path, p, sizeof p);
  if (r) return r;
  DIR* d = opendir(p);
  if (!d) return -errno;
  fi->fh = (uint64_t)(uintptr_t)d;
  return 0;
}

static int on_readdir(const char* path, void* buf, fuse_fill_dir_t fill, off_t off, struct fuse_file_info* fi,
                      enum fuse_readdir_flags flags) {
  (void)path, (void)off, (void)flags;
  round_trip(op_readdir);
  DIR* d = (DIR*)(uintptr_t)fi->fh;
  rewinddir(d);
  for (struct dirent* e; (e = readdir(d)) != NULL;) {
    if (fill(buf, e->d_name, NULL, 0, 0)) break;
  }
  return 0;
}

static int on_releasedir(const char* path, struct fuse_file_info* fi) {
  (void)path;
  round_trip(op_releasedir);
  closedir((DIR*)(uintptr_t)fi->fh);
  return 0;
}

static const struct fuse_operations operations = {
    .init = on_init,
    .destroy = on_destroy,
    .getattr = on_getattr,
    .open = on_open,
    .read = on_read,
    .release = on_release,
    .opendir = on_opendir,
    .readdir = on_readdir,
    .releasedir = on_releasedir,
};

int main(int argc, char** argv) {
  if (argc < 5) {
    fprintf(stderr, "usage: bench_slow_fs SOURCE MOUNTPOINT DELAY_US COUNTS_FILE [fuse options]\n");
    return 2;
  }
  if (!realpath(argv[1], source)) {
    perror(argv[1]);
    return 2;
  }
  delay_us = strtol(argv[3], NULL, 10);
  counts_file = argv[4];
  /* fuse_main's arguments: the program, the mount point, the options given, and ours. */
  char* args[64];
  int n = 0;
  args[n++] = argv[0];
  args[n++] = argv[2];
  for (int i = 5; i < argc && n < 58; ++i) args[n++] = argv[i];
  args[n++] = "-o";
  args[n++] = "ro,default_permissions,max_threads=64";
  args[n] = NULL;
  return fuse_main(n, args, &operations, NULL);
}
