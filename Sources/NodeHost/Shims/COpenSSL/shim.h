#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

// OpenSSL is opened with dlopen on first use (OpenSSLLibrary), not linked: its headers give the
// types. These function-like macros Swift cannot import are calls of SSL_CTX_ctrl / SSL_ctrl,
// which the caller looked up and passes in.
typedef long (*copenssl_ctx_ctrl_fn)(SSL_CTX *ctx, int cmd, long larg, void *parg);
typedef long (*copenssl_ctrl_fn)(SSL *ssl, int cmd, long larg, void *parg);

static inline long copenssl_set_min_proto(void *ctx_ctrl, SSL_CTX *ctx, int version) {
    return ((copenssl_ctx_ctrl_fn)ctx_ctrl)(ctx, SSL_CTRL_SET_MIN_PROTO_VERSION, version, NULL);
}
static inline long copenssl_set_sni(void *ctrl, SSL *ssl, const char *name) {
    return ((copenssl_ctrl_fn)ctrl)(ssl, SSL_CTRL_SET_TLSEXT_HOSTNAME, TLSEXT_NAMETYPE_host_name, (void *)name);
}
