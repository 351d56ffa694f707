//! TLS to the server: rustls with the ring provider (no OpenSSL, no C
//! build beyond ring's), trusting the system's roots, the Mozilla roots
//! webpki-roots carries, and any `--ca-cert FILE` (PEM) for a private CA.

use std::path::{Path, PathBuf};
#[cfg(test)]
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock};

use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;
use rustls::{ClientConfig, RootCertStore};

/// The bundled and the system's roots, read once per run: every client
/// (the server's, and `--otlp`'s collector's) starts from them. Reading
/// the system's store parses every certificate in it, which takes a while.
static SHARED_ROOTS: LazyLock<RootCertStore> = LazyLock::new(|| {
    #[cfg(test)]
    ROOTS_LOADED.fetch_add(1, Ordering::Relaxed);
    let mut roots = RootCertStore::empty();
    roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
    // The system's store may be absent or partly unreadable: the bundled
    // roots still stand, and a private CA comes with --ca-cert.
    for cert in rustls_native_certs::load_native_certs().certs {
        let _ = roots.add(cert);
    }
    roots
});

/// How many times the shared roots were read: once at most.
#[cfg(test)]
static ROOTS_LOADED: AtomicUsize = AtomicUsize::new(0);

/// Builds the client configuration every HTTPS connection uses: the
/// shared roots and `ca_certs`. Speaks HTTP/1.1 only (announced by ALPN).
pub(crate) fn client_config(ca_certs: &[PathBuf]) -> Result<Arc<ClientConfig>, String> {
    let mut roots = SHARED_ROOTS.clone();
    for path in ca_certs {
        for cert in read_pem(path)? {
            roots
                .add(cert)
                .map_err(|e| format!("--ca-cert {}: not a usable CA certificate: {e}", path.display()))?;
        }
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("cannot set up TLS: {e}"))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

/// The certificates of a PEM file; an error when it holds none.
fn read_pem(path: &Path) -> Result<Vec<CertificateDer<'static>>, String> {
    let shown = path.display();
    let certs = CertificateDer::pem_file_iter(path)
        .map_err(|e| format!("--ca-cert {shown}: cannot read it: {e}"))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("--ca-cert {shown}: not PEM: {e}"))?;
    if certs.is_empty() {
        return Err(format!("--ca-cert {shown}: holds no CERTIFICATE block"));
    }
    Ok(certs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_without_certificates_is_a_clear_error() {
        let dir = tempfile::tempdir().unwrap();
        let empty = dir.path().join("empty.pem");
        std::fs::write(&empty, "not a certificate\n").unwrap();
        let error = client_config(&[empty]).unwrap_err();
        assert!(error.ends_with("holds no CERTIFICATE block"), "{error}");
        let missing = client_config(&[dir.path().join("missing.pem")]).unwrap_err();
        assert!(missing.contains("cannot read it"), "{missing}");
    }

    #[test]
    fn the_system_roots_are_read_once_for_every_client() {
        for _ in 0..3 {
            client_config(&[]).unwrap();
        }
        assert_eq!(ROOTS_LOADED.load(Ordering::Relaxed), 1);
    }

    #[test]
    fn a_private_ca_is_trusted() {
        let dir = tempfile::tempdir().unwrap();
        let ca =
            rcgen::CertifiedIssuer::self_signed(ca_params(), rcgen::KeyPair::generate().unwrap()).unwrap();
        let path = dir.path().join("ca.pem");
        std::fs::write(&path, ca.pem()).unwrap();
        assert!(client_config(&[path]).is_ok());
    }

    fn ca_params() -> rcgen::CertificateParams {
        let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        params
    }
}
