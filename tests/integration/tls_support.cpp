#include "tls_support.hpp"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <random>
#include <stdexcept>

namespace parley::integration {

namespace {

template <typename T, void (*Free)(T*)>
struct freer {
    void operator()(T* p) const { Free(p); }
};
using key_ptr = std::unique_ptr<EVP_PKEY, freer<EVP_PKEY, EVP_PKEY_free>>;
using cert_ptr = std::unique_ptr<X509, freer<X509, X509_free>>;
using extension_ptr = std::unique_ptr<X509_EXTENSION, freer<X509_EXTENSION, X509_EXTENSION_free>>;

void check(bool ok, const char* what) {
    if (!ok) {
        throw std::runtime_error(std::string("making a test certificate: ") + what + " failed");
    }
}

void write_pem(const std::string& path, const std::function<int(FILE*)>& write) {
    FILE* f = std::fopen(path.c_str(), "w");
    check(f != nullptr, "opening the output file");
    const int ok = write(f);
    std::fclose(f);
    check(ok == 1, "writing PEM");
}

}  // namespace

void write_self_signed(const std::string& common_name, const std::string& cert_path, const std::string& key_path) {
    key_ptr key(EVP_EC_gen("P-256"));
    check(key != nullptr, "EC key generation");
    cert_ptr cert(X509_new());
    check(cert != nullptr, "X509_new");
    check(X509_set_version(cert.get(), 2) == 1, "setting version 3");
    // A random serial: clients may cache certificates by issuer and serial.
    const std::int64_t serial = static_cast<std::int64_t>(std::random_device{}() & 0x7fffffff) + 1;
    check(ASN1_INTEGER_set_int64(X509_get_serialNumber(cert.get()), serial) == 1, "serial");
    check(X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600) != nullptr, "not before");
    check(X509_gmtime_adj(X509_getm_notAfter(cert.get()), 24 * 3600) != nullptr, "not after");
    X509_NAME* name = X509_get_subject_name(cert.get());
    check(X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                                     reinterpret_cast<const unsigned char*>(common_name.c_str()), -1, -1, 0) == 1,
          "subject");
    check(X509_set_issuer_name(cert.get(), name) == 1, "issuer");
    check(X509_set_pubkey(cert.get(), key.get()) == 1, "public key");
    X509V3_CTX context;
    X509V3_set_ctx_nodb(&context);
    X509V3_set_ctx(&context, cert.get(), cert.get(), nullptr, nullptr, 0);
    extension_ptr names(X509V3_EXT_conf_nid(nullptr, &context, NID_subject_alt_name, "IP:127.0.0.1,DNS:localhost"));
    check(names != nullptr && X509_add_ext(cert.get(), names.get(), -1) == 1, "subjectAltName");
    check(X509_sign(cert.get(), key.get(), EVP_sha256()) > 0, "signing");

    // Written to new files renamed into place, so a daemon reloading meanwhile never reads half.
    const std::string cert_tmp = cert_path + ".new";
    const std::string key_tmp = key_path + ".new";
    write_pem(cert_tmp, [&](FILE* f) { return PEM_write_X509(f, cert.get()); });
    write_pem(key_tmp, [&](FILE* f) {
        return PEM_write_PrivateKey(f, key.get(), nullptr, nullptr, 0, nullptr, nullptr);
    });
    std::filesystem::rename(key_tmp, key_path);
    std::filesystem::rename(cert_tmp, cert_path);
}

void replace_file(const std::string& path, const std::string& content) {
    const std::string tmp = path + ".new";
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        out << content;
        check(static_cast<bool>(out), "writing a file");
    }
    std::filesystem::rename(tmp, path);
}

}  // namespace parley::integration
