"""A local RFC 3161 time-stamping authority for the tests: a CA and a TSA certificate made with
``cryptography``, answers signed by ``openssl ts -reply``, served over HTTP on loopback."""

import contextlib
import datetime
import http.server
import subprocess
import tempfile
import threading
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from tests.helpers import SHUTDOWN_POLL

CONFIG = """\
[ tsa ]
default_tsa = local
[ local ]
dir = {folder}
serial = $dir/serial
crypto_device = builtin
signer_cert = $dir/tsa.pem
signer_key = $dir/tsa.key
signer_digest = sha256
default_policy = 1.3.6.1.4.1.55555.1
digests = sha256, sha384, sha512
accuracy = secs:1
ordering = yes
tsa_name = yes
ess_cert_id_chain = no
ess_cert_id_alg = sha256
"""


def _name(common: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common)])


def _pem(path: Path, certificate=None, key=None) -> None:
    if certificate is not None:
        path.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    else:
        path.write_bytes(
            key.private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.PKCS8,
                serialization.NoEncryption(),
            )
        )


def make_authority(folder: Path) -> x509.Certificate:
    """Write a CA, a TSA certificate it issued (EKU timeStamping, critical), their keys and the
    ``openssl ts`` configuration into ``folder``; returns the CA certificate."""
    start = datetime.datetime(2020, 1, 1, tzinfo=datetime.UTC)
    end = datetime.datetime(2120, 1, 1, tzinfo=datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = (
        x509.CertificateBuilder()
        .subject_name(_name("Test Time-Stamping CA"))
        .issuer_name(_name("Test Time-Stamping CA"))
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(start)
        .not_valid_after(end)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=False,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .sign(ca_key, hashes.SHA256())
    )
    tsa_key = ec.generate_private_key(ec.SECP256R1())
    tsa = (
        x509.CertificateBuilder()
        .subject_name(_name("Test Time-Stamping Authority"))
        .issuer_name(ca.subject)
        .public_key(tsa_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(start)
        .not_valid_after(end)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.TIME_STAMPING]), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    _pem(folder / "ca.pem", certificate=ca)
    _pem(folder / "tsa.pem", certificate=tsa)
    _pem(folder / "tsa.key", key=tsa_key)
    (folder / "serial").write_text("01\n")
    (folder / "ts.cnf").write_text(CONFIG.format(folder=folder))
    return ca


class _Handler(http.server.BaseHTTPRequestHandler):
    folder: Path
    lock: threading.Lock
    probe = None  # called before each answer (a test's check of the caller's state)

    def do_POST(self):
        if self.probe is not None:
            self.probe()
        query = self.rfile.read(int(self.headers["Content-Length"]))
        with self.lock, tempfile.TemporaryDirectory() as scratch:
            asked, answer = Path(scratch) / "query.tsq", Path(scratch) / "reply.tsr"
            asked.write_bytes(query)
            subprocess.run(
                [
                    "openssl",
                    "ts",
                    "-reply",
                    "-config",
                    str(self.folder / "ts.cnf"),
                    "-queryfile",
                    str(asked),
                    "-out",
                    str(answer),
                ],
                check=True,
                capture_output=True,
            )
            body = answer.read_bytes()
        self.send_response(200)
        self.send_header("Content-Type", "application/timestamp-reply")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        """Quiet."""


@contextlib.contextmanager
def authority(folder: Path, probe=None):
    """Serve a local authority from ``folder``: yields ``(url, CA certificate)``; ``probe()``
    is called as each request arrives, before it is answered."""
    ca = make_authority(folder)
    attributes = {"folder": folder, "lock": threading.Lock()}
    if probe is not None:
        attributes["probe"] = staticmethod(probe)
    handler = type("Handler", (_Handler,), attributes)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, args=(SHUTDOWN_POLL,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/", ca
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
