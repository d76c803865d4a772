#ifndef LOCKSTEP_CCRYPTO_H
#define LOCKSTEP_CCRYPTO_H
// OpenSSL 3's libcrypto, for the clock packet's HMAC-SHA256 (EVP_MAC) and CRYPTO_memcmp.
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#endif
