import Config
import Skills
import Support

extension Doctor {
    /// `doctor`'s skills lines: each skill that would be published and each one refused, with why.
    static func skillFindings(_ config: NodeConfig) -> [Finding] {
        let sources = SkillSources(config)
        guard sources.enabled else {
            return [.init(level: .ok, area: "skills", text: "skills.enabled is false: none are published")]
        }
        let scan = SkillCatalog.scan(sources)
        var out: [Finding] = []
        let dirs = sources.roots.joined(separator: ", ")
        if scan.skills.isEmpty {
            out.append(.init(level: .ok, area: "skills", text: "none found (in \(dirs)); a skill is <dir>/<name>/SKILL.md with name: and description: frontmatter"))
        } else {
            let bytes = scan.skills.reduce(0) { $0 + $1.content.utf8.count }
            out.append(.init(level: .ok, area: "skills", text: "\(scan.skills.count) to publish (\(bytes) bytes of \(SkillCatalog.maxTotalBytes / 1024) KiB) from \(dirs)"))
            for s in scan.skills { out.append(.init(level: .ok, area: "skills", text: "\(s.name): \(s.directory)")) }
        }
        for r in scan.rejected { out.append(.init(level: .warn, area: "skills", text: "not published: \(r)")) }
        return out
    }
}
