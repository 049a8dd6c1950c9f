/* libpq through dlopen: see include/COutliveLibpq.h. */
#include "COutliveLibpq.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* PGnotify's public fields, in libpq-fe.h's order (unchanged since 7.x). */
typedef struct {
    char *relname;
    int be_pid;
    char *extra;
} notify_fields;

typedef void (*notice_processor)(void *argument, const char *message);

static struct {
    COutlive_PGconn *(*PQconnectdbParams)(const char *const *, const char *const *, int);
    int (*PQstatus)(const COutlive_PGconn *);
    int (*PQtransactionStatus)(const COutlive_PGconn *);
    char *(*PQerrorMessage)(const COutlive_PGconn *);
    void (*PQfinish)(COutlive_PGconn *);
    void (*PQreset)(COutlive_PGconn *);
    int (*PQsocket)(const COutlive_PGconn *);
    int (*PQbackendPID)(const COutlive_PGconn *);
    COutlive_PGresult *(*PQexec)(COutlive_PGconn *, const char *);
    COutlive_PGresult *(*PQexecParams)(COutlive_PGconn *, const char *, int, const COutlive_Oid *,
                                       const char *const *, const int *, const int *, int);
    int (*PQresultStatus)(const COutlive_PGresult *);
    char *(*PQresultErrorMessage)(const COutlive_PGresult *);
    char *(*PQresultErrorField)(const COutlive_PGresult *, int);
    int (*PQntuples)(const COutlive_PGresult *);
    int (*PQnfields)(const COutlive_PGresult *);
    COutlive_Oid (*PQftype)(const COutlive_PGresult *, int);
    char *(*PQgetvalue)(const COutlive_PGresult *, int, int);
    int (*PQgetisnull)(const COutlive_PGresult *, int, int);
    int (*PQgetlength)(const COutlive_PGresult *, int, int);
    char *(*PQcmdTuples)(COutlive_PGresult *);
    void (*PQclear)(COutlive_PGresult *);
    int (*PQconsumeInput)(COutlive_PGconn *);
    notify_fields *(*PQnotifies)(COutlive_PGconn *);
    void (*PQfreemem)(void *);
    char *(*PQescapeIdentifier)(COutlive_PGconn *, const char *, size_t);
    notice_processor (*PQsetNoticeProcessor)(COutlive_PGconn *, notice_processor, void *);
    int (*PQsendQueryParams)(COutlive_PGconn *, const char *, int, const COutlive_Oid *, const char *const *,
                             const int *, const int *, int);
    int (*PQsendPrepare)(COutlive_PGconn *, const char *, const char *, int, const COutlive_Oid *);
    int (*PQsendQueryPrepared)(COutlive_PGconn *, const char *, int, const char *const *, const int *, const int *, int);
    COutlive_PGresult *(*PQgetResult)(COutlive_PGconn *);
    char *(*PQcmdStatus)(COutlive_PGresult *);
    int (*PQenterPipelineMode)(COutlive_PGconn *);
    int (*PQexitPipelineMode)(COutlive_PGconn *);
    int (*PQpipelineSync)(COutlive_PGconn *);
    int (*PQpipelineStatus)(const COutlive_PGconn *);
} pq;

static pthread_mutex_t load_mutex = PTHREAD_MUTEX_INITIALIZER;
static int loaded; /* read with __atomic after the table is filled */

#define PQ_SYMBOLS(X) \
    X(PQconnectdbParams) X(PQstatus) X(PQtransactionStatus) X(PQerrorMessage) X(PQfinish) X(PQreset) \
    X(PQsocket) X(PQbackendPID) X(PQexec) X(PQexecParams) X(PQresultStatus) X(PQresultErrorMessage) \
    X(PQresultErrorField) X(PQntuples) X(PQnfields) X(PQftype) X(PQgetvalue) X(PQgetisnull) \
    X(PQgetlength) X(PQcmdTuples) X(PQclear) X(PQconsumeInput) X(PQnotifies) X(PQfreemem) \
    X(PQescapeIdentifier) X(PQsetNoticeProcessor) X(PQsendQueryParams) X(PQsendPrepare) X(PQsendQueryPrepared) \
    X(PQgetResult) X(PQcmdStatus) X(PQenterPipelineMode) X(PQexitPipelineMode) X(PQpipelineSync) X(PQpipelineStatus)

static const char *const missing_hint =
    "PostgreSQL stores need libpq, the PostgreSQL client library: install Debian's libpq5 package "
    "(apt-get install libpq5; other systems: the package that provides libpq.so.5)";

int COutlive_pq_load(const char *path, char *error, size_t capacity) {
    if (path == NULL && __atomic_load_n(&loaded, __ATOMIC_ACQUIRE)) return 0;
    const char *name = path;
    if (name == NULL) name = getenv("OUTLIVE_TEST_LIBPQ");
    if (name == NULL || name[0] == '\0') name = "libpq.so.5";
    pthread_mutex_lock(&load_mutex);
    if (path == NULL && loaded) {
        pthread_mutex_unlock(&load_mutex);
        return 0;
    }
    void *library = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        const char *reason = dlerror();
        snprintf(error, capacity, "%s; loading %s failed: %s", missing_hint, name, reason ? reason : "unknown error");
        pthread_mutex_unlock(&load_mutex);
        return -1;
    }
    typeof(pq) table;
#define RESOLVE(symbol) \
    *(void **)&table.symbol = dlsym(library, #symbol); \
    if (table.symbol == NULL) { \
        snprintf(error, capacity, "%s lacks the function " #symbol " (libpq older than PostgreSQL 14?); " \
                 "install a current libpq5", name); \
        dlclose(library); \
        pthread_mutex_unlock(&load_mutex); \
        return -1; \
    }
    PQ_SYMBOLS(RESOLVE)
#undef RESOLVE
    if (!loaded) {
        /* Never unloaded: connections may outlive any handle that asked for it. */
        pq = table;
        __atomic_store_n(&loaded, 1, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&load_mutex);
    return 0;
}

int COutlive_pq_loaded(void) { return __atomic_load_n(&loaded, __ATOMIC_ACQUIRE); }

COutlive_PGconn *COutlive_PQconnectdbParams(const char *const *keywords, const char *const *values, int expand_dbname) {
    return pq.PQconnectdbParams(keywords, values, expand_dbname);
}
int COutlive_PQstatus(const COutlive_PGconn *conn) { return pq.PQstatus(conn); }
int COutlive_PQtransactionStatus(const COutlive_PGconn *conn) { return pq.PQtransactionStatus(conn); }
const char *COutlive_PQerrorMessage(const COutlive_PGconn *conn) { return pq.PQerrorMessage(conn); }
void COutlive_PQfinish(COutlive_PGconn *conn) { pq.PQfinish(conn); }
void COutlive_PQreset(COutlive_PGconn *conn) { pq.PQreset(conn); }
int COutlive_PQsocket(const COutlive_PGconn *conn) { return pq.PQsocket(conn); }
int COutlive_PQbackendPID(const COutlive_PGconn *conn) { return pq.PQbackendPID(conn); }
COutlive_PGresult *COutlive_PQexec(COutlive_PGconn *conn, const char *command) { return pq.PQexec(conn, command); }
COutlive_PGresult *COutlive_PQexecParams(COutlive_PGconn *conn, const char *command, int count,
                                         const COutlive_Oid *types, const char *const *values,
                                         const int *lengths, const int *formats, int result_format) {
    return pq.PQexecParams(conn, command, count, types, values, lengths, formats, result_format);
}
int COutlive_PQresultStatus(const COutlive_PGresult *result) { return pq.PQresultStatus(result); }
const char *COutlive_PQresultErrorMessage(const COutlive_PGresult *result) { return pq.PQresultErrorMessage(result); }
const char *COutlive_PQresultErrorField(const COutlive_PGresult *result, int field) {
    return pq.PQresultErrorField(result, field);
}
int COutlive_PQntuples(const COutlive_PGresult *result) { return pq.PQntuples(result); }
int COutlive_PQnfields(const COutlive_PGresult *result) { return pq.PQnfields(result); }
COutlive_Oid COutlive_PQftype(const COutlive_PGresult *result, int column) { return pq.PQftype(result, column); }
const char *COutlive_PQgetvalue(const COutlive_PGresult *result, int row, int column) {
    return pq.PQgetvalue(result, row, column);
}
int COutlive_PQgetisnull(const COutlive_PGresult *result, int row, int column) { return pq.PQgetisnull(result, row, column); }
int COutlive_PQgetlength(const COutlive_PGresult *result, int row, int column) { return pq.PQgetlength(result, row, column); }
const char *COutlive_PQcmdTuples(COutlive_PGresult *result) { return pq.PQcmdTuples(result); }
void COutlive_PQclear(COutlive_PGresult *result) { pq.PQclear(result); }
int COutlive_PQconsumeInput(COutlive_PGconn *conn) { return pq.PQconsumeInput(conn); }
void COutlive_PQfreemem(void *pointer) { pq.PQfreemem(pointer); }
int COutlive_PQsendQueryParams(COutlive_PGconn *conn, const char *command, int count, const COutlive_Oid *types,
                               const char *const *values, const int *lengths, const int *formats, int result_format) {
    return pq.PQsendQueryParams(conn, command, count, types, values, lengths, formats, result_format);
}
int COutlive_PQsendPrepare(COutlive_PGconn *conn, const char *name, const char *query, int count,
                           const COutlive_Oid *types) {
    return pq.PQsendPrepare(conn, name, query, count, types);
}
int COutlive_PQsendQueryPrepared(COutlive_PGconn *conn, const char *name, int count, const char *const *values,
                                 const int *lengths, const int *formats, int result_format) {
    return pq.PQsendQueryPrepared(conn, name, count, values, lengths, formats, result_format);
}
COutlive_PGresult *COutlive_PQgetResult(COutlive_PGconn *conn) { return pq.PQgetResult(conn); }
const char *COutlive_PQcmdStatus(COutlive_PGresult *result) { return pq.PQcmdStatus(result); }
int COutlive_PQenterPipelineMode(COutlive_PGconn *conn) { return pq.PQenterPipelineMode(conn); }
int COutlive_PQexitPipelineMode(COutlive_PGconn *conn) { return pq.PQexitPipelineMode(conn); }
int COutlive_PQpipelineSync(COutlive_PGconn *conn) { return pq.PQpipelineSync(conn); }
int COutlive_PQpipelineStatus(const COutlive_PGconn *conn) { return pq.PQpipelineStatus(conn); }
char *COutlive_PQescapeIdentifier(COutlive_PGconn *conn, const char *text, size_t length) {
    return pq.PQescapeIdentifier(conn, text, length);
}

static void copy_truncated(char *buffer, size_t capacity, const char *text) {
    if (capacity == 0) return;
    snprintf(buffer, capacity, "%s", text ? text : "");
}

int COutlive_pq_next_notification(COutlive_PGconn *conn, char *channel, size_t channel_capacity,
                                  char *payload, size_t payload_capacity) {
    notify_fields *notification = pq.PQnotifies(conn);
    if (notification == NULL) return 0;
    copy_truncated(channel, channel_capacity, notification->relname);
    copy_truncated(payload, payload_capacity, notification->extra);
    pq.PQfreemem(notification);
    return 1;
}

static void discard_notice(void *argument, const char *message) {
    (void)argument;
    (void)message;
}

void COutlive_pq_silence_notices(COutlive_PGconn *conn) { pq.PQsetNoticeProcessor(conn, discard_notice, NULL); }
