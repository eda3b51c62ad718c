"""Session sampling: the shared vectors every SDK checks (sdks/sampling-vectors.json)."""

from __future__ import annotations

import json
import os
import unittest

from cellar_sdk.sampling import fmix32, fnv1a32, sample_hash, session_sampled

VECTORS = os.path.join(os.path.dirname(__file__), "..", "..", "sampling-vectors.json")


class SamplingVectorsTest(unittest.TestCase):
    def test_reference_values(self) -> None:
        self.assertEqual(fnv1a32(b""), 0x811C9DC5)
        self.assertEqual(fnv1a32(b"foobar"), 0xBF9CF968)
        self.assertEqual(fmix32(0), 0)
        self.assertEqual(fmix32(1), 0x514E28B7)

    def test_shared_vectors(self) -> None:
        with open(VECTORS, encoding="utf-8") as f:
            data = json.load(f)
        self.assertGreater(len(data["vectors"]), 80)
        for v in data["vectors"]:
            self.assertEqual(fnv1a32(v["id"].encode("utf-8")), v["fnv1a32"], v["id"])
            self.assertEqual(sample_hash(v["id"]), v["hash"], v["id"])
            for rate, kept in v["kept"].items():
                self.assertEqual(session_sampled(v["id"], float(rate)), kept, (v["id"], rate))


if __name__ == "__main__":
    unittest.main()
