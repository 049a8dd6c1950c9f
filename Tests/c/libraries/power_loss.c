/* Preloaded (LD_PRELOAD) into a process whose store's power is to be lost:
 * each fsync or fdatasync of a regular file inside $OUTLIVE_POWER_LOSS_DIR
 * first brings the file's shadow in $OUTLIVE_POWER_LOSS_SHADOW up to the
 * file's content (power_loss.h). The copy is made before the real sync, while
 * the caller still holds what it holds around the sync (SQLite's write lock
 * for the log), so the shadow is what that sync makes durable; a kill during
 * the copy leaves a shadow with part of the new chunks, as a power loss during
 * a sync leaves part of the pages it was writing.
 * The copy is serialised per shadow by an flock on it, across the process's
 * threads and across processes. */
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/file.h>
#include "power_loss.h"

static void keep_what_the_sync_makes_durable(int fd) {
    const char *dir = getenv(POWER_LOSS_DIR), *shadow = getenv(POWER_LOSS_SHADOW);
    if (!dir || !shadow) return;
    int saved = errno;
    char link[64], path[PATH_MAX], shadow_path[PATH_MAX];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t length = readlink(link, path, sizeof path - 1);
    size_t dir_length = strlen(dir);
    struct stat status;
    if (length > 0 && (path[length] = '\0', strncmp(path, dir, dir_length) == 0) && path[dir_length] == '/' &&
        fstat(fd, &status) == 0 && S_ISREG(status.st_mode) &&
        power_loss_shadow_path(shadow, path + dir_length + 1, shadow_path, sizeof shadow_path) == 0) {
        /* The file opened again for reading: the caller's descriptor may be write-only (the log's fill). */
        int from = open(link, O_RDONLY | O_CLOEXEC);
        int to = open(shadow_path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
        if (from < 0 || to < 0 || flock(to, LOCK_EX) != 0 || power_loss_copy(from, to, NULL) != 0) {
            /* A shadow that cannot follow its file makes the test's verdict meaningless: stop with a status
             * the harness fails on (a signal would read as its own kill). */
            fprintf(stderr, "libpower_loss: keeping %s in %s: %s\n", path, shadow_path, strerror(errno));
            _exit(97);
        }
        close(from);
        close(to);
    }
    errno = saved;
}

int fsync(int fd) {
    static int (*real)(int);
    if (!real) real = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
    keep_what_the_sync_makes_durable(fd);
    return real(fd);
}

int fdatasync(int fd) {
    static int (*real)(int);
    if (!real) real = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
    keep_what_the_sync_makes_durable(fd);
    return real(fd);
}
