import Kit

/// A node-hosted skill's locator as `cwd` (`node://<node id>/skills/<name>`, what the gateway hands
/// an agent for a skill this node publishes) becomes that skill's directory before system.run or
/// system.run.prepare looks at anything else, so the exec policy, the approvals and the sandbox
/// judge the real directory exactly as they would a path given directly. A locator that does not
/// resolve refuses the command (INVALID_REQUEST, the gateway's wording); it is never taken as a
/// relative path.
enum SkillCwd {
    static func resolved(_ p: SystemRunParams, _ skills: SkillLocator) throws(NodeError) -> SystemRunParams {
        var p = p
        p.cwd = try skills.resolve(cwd: p.cwd)
        // The approved plan carries the cwd too: mapped the same way, it still equals the run's.
        if let planCwd = p.systemRunPlan?.cwd { p.systemRunPlan?.cwd = try skills.resolve(cwd: planCwd) }
        return p
    }

    static func resolved(_ p: SystemRunPrepareParams, _ skills: SkillLocator) throws(NodeError) -> SystemRunPrepareParams {
        var p = p
        p.cwd = try skills.resolve(cwd: p.cwd)
        return p
    }
}
