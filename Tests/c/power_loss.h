/* A power loss, simulated: what a store's files hold on the disk is what they
 * held at their last fsync or fdatasync. libpower_loss.so (preloaded into a
 * process) keeps, in a shadow directory, a copy of each file of the store as
 * its last sync left it; after the process is killed, the test copies the
 * shadows back over the files (power_loss_roll_back), as a machine that lost
 * its power would find them when it starts again.
 *
 * The model is the harshest outcome for what was not synced: every write since
 * a file's last sync is lost, none is kept in part. (A kill -9 is the other
 * end, every write kept: the crash harness's other mode.) A sync covers every
 * write to the file before it, by any process, as the kernel's page cache
 * does, so a sync's copy is the file's whole content, compared chunk by chunk
 * with the shadow. A file never synced since the shadows were taken is lost
 * with its content: deleted (its directory entry may not have reached the
 * disk either), and so is SQLite's shared-memory index (`-shm`), which SQLite
 * rebuilds from the log. Directory entries are otherwise left as they are.
 *
 * Shared by the preloaded library and the test: both use the same names. */
#ifndef OUTLIVE_TEST_POWER_LOSS_H
#define OUTLIVE_TEST_POWER_LOSS_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define POWER_LOSS_DIR "OUTLIVE_POWER_LOSS_DIR"       /* the store's directory, absolute, no symbolic link */
#define POWER_LOSS_SHADOW "OUTLIVE_POWER_LOSS_SHADOW" /* where the synced copies are kept */
#define POWER_LOSS_CHUNK 65536

/* The shadow of `relative` (a path inside the store's directory): one flat
 * directory, '/' written as '#'. */
static inline int power_loss_shadow_path(const char *shadow, const char *relative, char *out, size_t size) {
    int length = snprintf(out, size, "%s/", shadow);
    if (length < 0 || (size_t)length >= size) return -1;
    for (const char *c = relative; *c; c++) {
        if ((size_t)length + 1 >= size) return -1;
        out[length++] = *c == '/' ? '#' : *c;
    }
    out[length] = '\0';
    return 0;
}

/* Makes `to` hold what `from` holds, writing only the chunks that differ.
 * Adds to *changed the bytes that differed (the file's growth or shrinking
 * counts as differing). Returns 0, or -1 with errno set. */
static inline int power_loss_copy(int from, int to, long long *changed) {
    struct stat from_stat, to_stat;
    if (fstat(from, &from_stat) != 0 || fstat(to, &to_stat) != 0) return -1;
    /* On the heap: thread-local buffers would take 128 KiB from every thread of the preloaded process. */
    char *a = malloc(2 * POWER_LOSS_CHUNK), *b = a ? a + POWER_LOSS_CHUNK : NULL;
    if (!a) return -1;
    int result = 0;
    for (off_t at = 0; result == 0 && at < from_stat.st_size; at += POWER_LOSS_CHUNK) {
        ssize_t got = pread(from, a, POWER_LOSS_CHUNK, at);
        if (got <= 0) {
            if (got < 0) result = -1;
            break;
        }
        ssize_t had = at < to_stat.st_size ? pread(to, b, (size_t)got, at) : 0;
        if (had < 0) result = -1;
        else if (had == got && memcmp(a, b, (size_t)got) == 0) continue;
        else if (pwrite(to, a, (size_t)got, at) != got) {
            if (errno == 0) errno = EIO;
            result = -1;
        } else if (changed) {
            *changed += got;
        }
    }
    free(a);
    if (result == 0 && to_stat.st_size != from_stat.st_size) {
        if (ftruncate(to, from_stat.st_size) != 0) return -1;
        if (changed && to_stat.st_size > from_stat.st_size) *changed += to_stat.st_size - from_stat.st_size;
    }
    return result;
}

#endif
