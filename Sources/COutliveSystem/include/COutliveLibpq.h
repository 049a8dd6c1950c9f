/* libpq, loaded at run time. liboutlive.so has no NEEDED entry for libpq: the
 * first postgresql:// store of a process dlopen()s libpq.so.5 (Debian's libpq5)
 * and fills a table of the few functions the PostgreSQL backend calls; SQLite
 * users never load it. The types are declared opaquely here so that building
 * needs no libpq-fe.h (no libpq-dev); the constants below are libpq's stable ABI
 * (libpq-fe.h of PostgreSQL 10 to 17 has the same values). Pipeline mode needs
 * libpq 14 or newer; the server may be older (it is the extended protocol). */
#ifndef COUTLIVE_LIBPQ_H
#define COUTLIVE_LIBPQ_H

#include <stddef.h>
#include <poll.h> /* the liveness connection's socket is polled */

typedef struct COutlive_PGconn COutlive_PGconn;
typedef struct COutlive_PGresult COutlive_PGresult;
typedef unsigned int COutlive_Oid;

/* ConnStatusType, ExecStatusType, PGTransactionStatusType (libpq-fe.h). */
enum {
    COUTLIVE_CONNECTION_OK = 0,
    COUTLIVE_CONNECTION_BAD = 1,
};
enum {
    COUTLIVE_PGRES_EMPTY_QUERY = 0,
    COUTLIVE_PGRES_COMMAND_OK = 1,
    COUTLIVE_PGRES_TUPLES_OK = 2,
    COUTLIVE_PGRES_FATAL_ERROR = 7,
    COUTLIVE_PGRES_PIPELINE_SYNC = 10,
    COUTLIVE_PGRES_PIPELINE_ABORTED = 11,
};
enum {
    COUTLIVE_PQTRANS_IDLE = 0,
    COUTLIVE_PQTRANS_ACTIVE = 1,
    COUTLIVE_PQTRANS_INTRANS = 2,
    COUTLIVE_PQTRANS_INERROR = 3,
    COUTLIVE_PQTRANS_UNKNOWN = 4,
};
/* PG_DIAG_SQLSTATE */
#define COUTLIVE_PG_DIAG_SQLSTATE 'C'

/* Loads libpq once per process. path NULL: the library named by the test-only
 * environment variable OUTLIVE_TEST_LIBPQ if set (tests point it at a missing
 * file to prove the "no libpq" path), else "libpq.so.5". A non-NULL path is
 * tried even when libpq is loaded already, and a failure then leaves the loaded
 * table as it was. Returns 0, or -1 with a message in error (NUL-terminated,
 * truncated to capacity) naming the Debian package to install. A failure is not
 * remembered: a later call tries again (after the package was installed).
 * Thread-safe. */
int COutlive_pq_load(const char *path, char *error, size_t capacity);

/* Whether the table is filled (COutlive_pq_load succeeded in this process). */
int COutlive_pq_loaded(void);

/* Thin forwards to the libpq function of the same name (see libpq's manual).
 * Callable only after COutlive_pq_load returned 0. */
COutlive_PGconn *COutlive_PQconnectdbParams(const char *const *keywords, const char *const *values, int expand_dbname);
int COutlive_PQstatus(const COutlive_PGconn *conn);
int COutlive_PQtransactionStatus(const COutlive_PGconn *conn);
const char *COutlive_PQerrorMessage(const COutlive_PGconn *conn);
void COutlive_PQfinish(COutlive_PGconn *conn);
void COutlive_PQreset(COutlive_PGconn *conn);
int COutlive_PQsocket(const COutlive_PGconn *conn);
int COutlive_PQbackendPID(const COutlive_PGconn *conn);
COutlive_PGresult *COutlive_PQexec(COutlive_PGconn *conn, const char *command);
COutlive_PGresult *COutlive_PQexecParams(COutlive_PGconn *conn, const char *command, int count,
                                         const COutlive_Oid *types, const char *const *values,
                                         const int *lengths, const int *formats, int result_format);
int COutlive_PQresultStatus(const COutlive_PGresult *result);
const char *COutlive_PQresultErrorMessage(const COutlive_PGresult *result);
/* NULL when the result has no such field. */
const char *COutlive_PQresultErrorField(const COutlive_PGresult *result, int field);
int COutlive_PQntuples(const COutlive_PGresult *result);
int COutlive_PQnfields(const COutlive_PGresult *result);
COutlive_Oid COutlive_PQftype(const COutlive_PGresult *result, int column);
const char *COutlive_PQgetvalue(const COutlive_PGresult *result, int row, int column);
int COutlive_PQgetisnull(const COutlive_PGresult *result, int row, int column);
int COutlive_PQgetlength(const COutlive_PGresult *result, int row, int column);
const char *COutlive_PQcmdTuples(COutlive_PGresult *result);
void COutlive_PQclear(COutlive_PGresult *result);
int COutlive_PQconsumeInput(COutlive_PGconn *conn);
void COutlive_PQfreemem(void *pointer);
int COutlive_PQsendQueryParams(COutlive_PGconn *conn, const char *command, int count, const COutlive_Oid *types,
                               const char *const *values, const int *lengths, const int *formats, int result_format);
int COutlive_PQsendPrepare(COutlive_PGconn *conn, const char *name, const char *query, int count,
                           const COutlive_Oid *types);
int COutlive_PQsendQueryPrepared(COutlive_PGconn *conn, const char *name, int count, const char *const *values,
                                 const int *lengths, const int *formats, int result_format);
COutlive_PGresult *COutlive_PQgetResult(COutlive_PGconn *conn);
const char *COutlive_PQcmdStatus(COutlive_PGresult *result);
/* Pipeline mode (libpq 14). */
int COutlive_PQenterPipelineMode(COutlive_PGconn *conn);
int COutlive_PQexitPipelineMode(COutlive_PGconn *conn);
int COutlive_PQpipelineSync(COutlive_PGconn *conn);
int COutlive_PQpipelineStatus(const COutlive_PGconn *conn);
/* Caller frees the result with COutlive_PQfreemem; NULL on failure. */
char *COutlive_PQescapeIdentifier(COutlive_PGconn *conn, const char *text, size_t length);

/* The next pending notification's channel and payload, copied into the
 * buffers (truncated, NUL-terminated); returns 1, or 0 when none is pending. */
int COutlive_pq_next_notification(COutlive_PGconn *conn, char *channel, size_t channel_capacity,
                                  char *payload, size_t payload_capacity);

/* Discards the server's notices (libpq prints them to stderr by default:
 * "relation already exists, skipping" and the like are not for the user). */
void COutlive_pq_silence_notices(COutlive_PGconn *conn);

#endif
