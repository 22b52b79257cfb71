"""WorldMedQA-V: multilingual, multimodal medical licensing exam questions from Brazil, Israel,
Japan and Spain, each in the local language and in English (Matos et al. 2024)."""
