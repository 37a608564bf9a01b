package admin

// registerSecrets adds the /v1/signing-secrets routes (design section 4).
func (s *Server) registerSecrets() {}
