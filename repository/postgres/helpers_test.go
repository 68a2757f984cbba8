package postgres_test

import (
	"github.com/skillsync/skillsync/internal/skilltest"
	"github.com/skillsync/skillsync/repository/repositorytest"
	"github.com/skillsync/skillsync/skill"
)

func skillNames(skills []skill.Skill) []string {
	var out []string
	for _, s := range skills {
		out = append(out, s.Name)
	}
	return out
}

func skillMD(name string) repositorytest.File {
	return repositorytest.File{Data: skilltest.SkillMD(name, "The "+name+" skill.")}
}
