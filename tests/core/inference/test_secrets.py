from medvqa.core.inference.secrets import MASK, scrub


def test_scrub_removes_secret_environment_values_and_bearer_tokens(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "ant-0123456789abcdef")
    monkeypatch.setenv("HF_TOKEN", "hf_abcdefghijkl")
    monkeypatch.setenv("HOME_DIR_NAME", "ant-0123456789")  # not secret-looking: left alone
    text = ("401: Incorrect API key provided: ant-0123456789abcdef; token hf_abcdefghijkl; "
            "header Authorization: Bearer xyz.123-abc; key sk-proj-AAAABBBBCCCCDDDD")
    out = scrub(text)
    for secret in ("ant-0123456789abcdef", "hf_abcdefghijkl", "xyz.123-abc", "sk-proj-AAAABBBBCCCCDDDD"):
        assert secret not in out
    assert out.count(MASK) == 4
    assert scrub("nothing to hide") == "nothing to hide"
