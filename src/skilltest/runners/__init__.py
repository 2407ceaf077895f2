"""Ways of getting model output, all behind one small protocol."""
