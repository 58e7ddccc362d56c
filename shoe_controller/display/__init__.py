"""What the dealer and the operator see: the console now, the web display later."""
