// glibc's stub resolver for wide-area DNS-SD queries through the system's configured nameservers
// (/etc/resolv.conf). A private res_state per call: res_query's global state is not thread-safe.
#include <string.h>
#include <netinet/in.h>
#include <arpa/nameser.h>
#include <resolv.h>
#include <netdb.h>

// Sends one class-IN query for `type` and copies the raw answer into `answer`. Returns its length,
// or -1 with *herr set (HOST_NOT_FOUND = NXDOMAIN, NO_DATA, TRY_AGAIN = no answer/timeout, …).
static inline int cresolv_query(const char *name, int type, unsigned char *answer, int anslen, int *herr) {
    struct __res_state st;
    memset(&st, 0, sizeof st);
    if (res_ninit(&st) != 0) { *herr = NETDB_INTERNAL; return -1; }
    int n = res_nquery(&st, name, C_IN, type, answer, anslen);
    *herr = n < 0 ? st.res_h_errno : 0;
    res_nclose(&st);
    return n;
}
